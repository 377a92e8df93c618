/** Work that continues after a response (mail): tracked so shutdown can wait for it. */
import type { Logger } from './log';

export class Tasks {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  /** Runs `job` in the background; a failure is logged with `event` and never thrown. */
  run(event: string, fields: Record<string, string | null>, job: () => Promise<void>): void {
    const p = job()
      .catch((err: { code?: string; name?: string }) => {
        // The error's code only: SMTP errors can echo addresses and server replies.
        this.logger.error(event, { ...fields, error: err?.code ?? err?.name ?? 'error' });
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
