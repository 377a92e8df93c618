/**
 * The part of Node's built-in `node:sqlite` (Node 22.13+, unflagged; the executable runs Node 24)
 * the store uses. @types/node stays at 20 for the rest of the code; these are Node 24's signatures.
 */
declare module 'node:sqlite' {
  type SupportedValue = null | number | bigint | string | Uint8Array;
  interface DatabaseSyncOptions {
    open?: boolean;
    readOnly?: boolean;
    enableForeignKeyConstraints?: boolean;
    timeout?: number;
  }
  interface StatementResultingChanges {
    changes: number | bigint;
    lastInsertRowid: number | bigint;
  }
  interface StatementColumnMetadata {
    column: string | null;
    database: string | null;
    name: string;
    table: string | null;
    type: string | null;
  }
  class StatementSync {
    all(...params: SupportedValue[]): unknown[];
    get(...params: SupportedValue[]): unknown;
    run(...params: SupportedValue[]): StatementResultingChanges;
    iterate(...params: SupportedValue[]): IterableIterator<unknown>;
    columns(): StatementColumnMetadata[];
    setReadBigInts(enabled: boolean): void;
    setReturnArrays(enabled: boolean): void;
    setAllowBareNamedParameters(enabled: boolean): void;
    readonly sourceSQL: string;
  }
  class DatabaseSync {
    constructor(location: string, options?: DatabaseSyncOptions);
    open(): void;
    close(): void;
    exec(sql: string): void;
    prepare(sql: string): StatementSync;
    readonly isOpen: boolean;
    readonly isTransaction: boolean;
  }
}

/** knex's own sqlite3 dialect and its runner, subclassed by src/store/sqlite-knex.ts (knex ships no types for them). */
declare module 'knex/lib/dialects/sqlite3' {
  const Client_SQLite3: unknown;
  export default Client_SQLite3;
}
declare module 'knex/lib/execution/runner' {
  const Runner: unknown;
  export default Runner;
}
