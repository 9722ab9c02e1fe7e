import type { FastifyInstance } from 'fastify';
import type { Deps } from '../http/context.js';

export function registerTransferRoutes(_app: FastifyInstance, _deps: Deps): void {}
