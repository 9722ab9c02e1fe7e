import type { FastifyInstance } from 'fastify';
import type { Deps } from '../http/context.js';

export function registerGenericRefundRoutes(_app: FastifyInstance, _deps: Deps): void {}
