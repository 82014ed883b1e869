import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import type { Admin } from '../../admin/index.js';
import { registerAdminAuth, registerAdminRequest } from './auth.js';
import { trustedProxies } from '../../http/forwarded.js';
import { registerSessionRoutes } from './session.js';
import { registerKeyRoutes } from './keys.js';
import { registerReportRoutes } from './reports.js';
import { registerTaskRoutes } from './tasks.js';
import { registerSystemRoutes, type ReloadResult } from './system.js';
import { registerConsoleRoutes } from './console-static.js';

export interface AdminRouteOptions {
  /** Re-reads the config file (POST /admin/api/reload); absent when the instance has none. */
  reload?: () => Promise<ReloadResult>;
  /** Where the built console lives (tests point elsewhere). */
  consoleDir?: string;
}

/** /admin/api/* and /console, in their own plugin so the admin auth hook guards only them. */
export function registerAdminRoutes(app: FastifyInstance, services: Services, admin: Admin, opts: AdminRouteOptions = {}): void {
  app.register(async (scope) => {
    registerAdminRequest(scope, trustedProxies(services.config.server.trusted_proxies));
    registerAdminAuth(scope, admin.access);
    registerSessionRoutes(scope, admin, services.config);
    registerKeyRoutes(scope, admin);
    registerReportRoutes(scope, admin);
    registerTaskRoutes(scope, admin);
    registerSystemRoutes(scope, admin, services.config, opts.reload);
    registerConsoleRoutes(scope, opts.consoleDir);
  });
}
