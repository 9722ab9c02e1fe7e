// The risk tables' row types live in the storage layer (src/db/tables/risk.ts) so that src/db/schema.ts
// needs nothing above it; this module re-exports them for the capability's own files.
export * from '../db/tables/risk.js';
