import type { Routes } from '../../pipeline/gateway.js';
import type { Services } from '../../services.js';
import type { Admin } from '../../admin/index.js';
import { adminAuth, adminRequest } from './auth.js';
import { trustedProxies } from '../../http/forwarded.js';
import { registerSessionRoutes } from './session.js';
import { registerKeyRoutes } from './keys.js';
import { registerProjectRoutes } from './projects.js';
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

/** /admin/api/* and /console, in their own scope so the admin steps guard only them. */
export function registerAdminRoutes(app: Routes, services: Services, admin: Admin, opts: AdminRouteOptions = {}): void {
  const scope = app.scope({ onRequest: [adminRequest(trustedProxies(services.config.server.trusted_proxies)), adminAuth(admin.access)] });
  registerSessionRoutes(scope, admin, services.config);
  registerKeyRoutes(scope, admin);
  registerProjectRoutes(scope, admin);
  registerReportRoutes(scope, admin);
  registerTaskRoutes(scope, admin);
  registerSystemRoutes(scope, admin, services.config, opts.reload);
  registerConsoleRoutes(scope, opts.consoleDir);
}
