/** Row ids as the API shows them (reference_id, a UUID). No imports: every domain may use it. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string can be a reference_id (anything else names no row: 404 without a query). */
export const isReference = (id: string): boolean => UUID.test(id);
