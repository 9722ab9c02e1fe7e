// src/cli still imports this module from here; it lives in src/web/logging.ts (the HTTP kit below the
// capabilities). This re-export points down and goes when src/cli imports src/web directly.
export * from '../web/logging.js';
