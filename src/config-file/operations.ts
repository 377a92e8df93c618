/** Configuration as a file, for the shell and `serve --config`: its schema, export, plan and apply. */
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { CONFIG_SCHEMA } from './schema';
import { appKey } from '../apps/app-rows';
import { allManaged, managedKey, type ManagedKind } from '../store/config-managed';
import { applyConfig, exportConfig, planConfig, type Plan } from './apply';

export type { Plan, PlanLine } from './apply';

export interface ConfigFileOperations {
  /** The file's JSON Schema. */
  schema(): object;
  /** What an operator configures, as YAML (never a secret). */
  export(actor: Actor): Promise<string>;
  /** What applying `text` (read from `file`; secrets from `env` and files) would change. */
  plan(actor: Actor, text: string, file: string, env: NodeJS.ProcessEnv): Promise<Plan>;
  /** Makes the store match `text`, in one transaction. */
  apply(actor: Actor, text: string, file: string, env: NodeJS.ProcessEnv): Promise<Plan>;
  /** Which configuration file manages what (read once): the console labels those objects and offers no change to them. */
  managedBy(actor: Actor): Promise<ManagedLookup>;
}

export interface ManagedLookup {
  /** The file that manages an object of a kind, by the name the file gives it; null: none. */
  of(kind: ManagedKind, name: string): string | null;
  /** The file that manages a forward-auth app, by its host and paths. */
  app(host: string, paths: readonly string[]): string | null;
}

const HEADER = `# Gatehouse configuration: gatehouse config plan FILE shows what apply would change,
# gatehouse config apply FILE (or serve --config FILE) makes the store match it.
# gatehouse config schema prints the JSON Schema editors check it with.
`;

/** Maps of one key written on one line: a secret's reference, an action's permission. */
const ONE_LINE = new Set(['env', 'file', 'guest', 'permission']);
/** The variables `config export` names for secrets it has no reference for (objects made by hand). */
const NAMED_BY_EXPORT = /^GATEHOUSE_(CLIENT_SECRET|PROVIDER_SECRET|WEBHOOK_SECRET|SCIM_TOKEN)_/;

export function configFileOperations(s: Services): ConfigFileOperations {
  return {
    schema: () => CONFIG_SCHEMA,
    async export(actor) {
      requireAdministrator(actor, 'export the configuration');
      const { Document, visit, isScalar } = await import('yaml');
      const doc = new Document(await exportConfig(s));
      // A reference and an action's permission on one line, as the documentation writes them; a
      // variable the export named (nobody chose it) says what it is for.
      visit(doc, {
        Map(_key, node) {
          const pair = node.items.length === 1 ? node.items[0] : undefined;
          if (!pair || !isScalar(pair.key) || !isScalar(pair.value) || !ONE_LINE.has(String(pair.key.value))) return;
          node.flow = true;
          const named = String(pair.value.value);
          if (pair.key.value === 'env' && NAMED_BY_EXPORT.test(named)) {
            node.comment = ` set ${named} to it where this file is applied (unset: the store keeps the one it has)`;
          }
        },
      });
      return HEADER + doc.toString({ lineWidth: 0 });
    },
    async plan(actor, text, file, env) {
      requireAdministrator(actor, 'plan a configuration');
      return planConfig(s, text, file, env);
    },
    async apply(actor, text, file, env) {
      requireAdministrator(actor, 'apply a configuration');
      return applyConfig(s, actor, text, file, env);
    },
    async managedBy(actor) {
      requireAdministrator(actor, 'read what configuration files manage');
      const files = new Map((await allManaged(s.store.root)).map((m) => [`${m.kind} ${m.name}`, m.file]));
      const of = (kind: ManagedKind, name: string) => files.get(`${kind} ${managedKey(kind, name)}`) ?? null;
      return { of, app: (host, paths) => of('forward_app', appKey({ host, paths })) };
    },
  };
}
