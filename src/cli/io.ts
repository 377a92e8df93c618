import { writeStdout } from '../log';

/** What a command may touch of the outside world: injectable, so tests run commands in-process. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** The whole of standard input (for --password-stdin). */
  readStdin: () => Promise<string>;
}

export const processIo: Io = {
  // A reader that has gone (`gatehouse group list | head -5`) ends the output quietly: the command
  // still finishes, with its own exit code, and no EPIPE stack trace.
  out: (t) => writeStdout(t),
  err: (t) => void process.stderr.write(t),
  env: process.env,
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};
