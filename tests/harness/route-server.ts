// A static origin for the browser smoke tests (tests/core/browser.test.ts,
// tests/runtime/browser.test.ts): every page and file comes from one `route` function, under two
// prefixes: /iso/REST is cross-origin isolated (COOP/COEP/CORP), /plain/REST is not. Both answer
// route(REST), so the same page can be loaded with and without isolation.
import { ISOLATION_HEADERS } from '../../web/app/tooling/security-headers.mjs';
import { startStaticServer, type RouteAnswer, type StaticServer } from './static-server.mjs';

/** Starts the origin on 127.0.0.1 (any free port). */
export function startRouteServer(route: (path: string) => RouteAnswer): Promise<StaticServer> {
  return startStaticServer({
    mounts: { '/iso/': route, '/plain/': route },
    headers: (path) => (path.startsWith('/iso/') ? ISOLATION_HEADERS : {}),
  });
}
