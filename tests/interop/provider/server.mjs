// An OpenID Certified provider (oidc-provider) for authzkit's interop tests, on 127.0.0.1.
//
// $INTEROP_PROVIDER_CONFIG is a JSON object: { issuer, clients, ttl, scopes, resources }; "{port}"
// in the issuer becomes the port it listens on (a free one). The provider grants
// client_credentials only, issues JWT access tokens for one resource server, and keeps a
// log of every request it answered at GET /__interop/requests (what the tests count), in
// which a client assertion shows only its header and claims, never the signed token itself.
// It prints one line, "ready <port>", once it listens.
import http from 'node:http';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(process.env.INTEROP_PROVIDER_CONFIG);
const RESOURCE = 'urn:authzkit:interop-api';
const requests = [];

function decodePart(part) {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

function assertionSummary(assertion) {
  if (typeof assertion !== 'string') return undefined;
  const [header, claims] = assertion.split('.');
  return { header: decodePart(header), claims: decodePart(claims) };
}

function makeProvider(issuer) {
const provider = new Provider(issuer, {
  clients: config.clients,
  scopes: ['openid', ...(config.scopes || 'read write').split(' ')],
  clientBasedCORS: () => false,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    revocation: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (resource !== RESOURCE && !(config.resources || []).includes(resource)) {
          throw new errors.InvalidTarget();
        }
        return { scope: config.scopes || 'read write', accessTokenFormat: 'jwt',
                 accessTokenTTL: config.ttl || 60 };
      },
    },
  },
  ttl: { ClientCredentials: config.ttl || 60 },
});
provider.proxy = false;
provider.on('server_error', (ctx, err) => console.error('server_error', err));

provider.use(async (ctx, next) => {
  if (ctx.path === '/__interop/requests') {
    ctx.body = requests;
    return;
  }
  await next();
  const params = ctx.oidc?.params || {};
  requests.push({
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    grant_type: params.grant_type,
    client_id: ctx.oidc?.client?.clientId ?? params.client_id,
    scope: params.scope,
    resource: params.resource,
    assertion: assertionSummary(params.client_assertion),
    error: ctx.status >= 400 ? ctx.body?.error : undefined,
    error_description: ctx.status >= 400 ? ctx.body?.error_description : undefined,
  });
});

return provider;
}

let handle = null;
const server = http.createServer((req, res) => handle(req, res));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  handle = makeProvider(config.issuer.replace('{port}', String(port))).callback();
  console.log(`ready ${port}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
