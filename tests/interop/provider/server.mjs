// An OpenID Certified provider (oidc-provider) for authzkit's interop tests, on 127.0.0.1.
//
// $INTEROP_PROVIDER_CONFIG is a JSON object: { issuer, clients, ttl, scopes, resources, tls };
// "{port}" in the issuer becomes the port it listens on (a free one). The provider grants
// client_credentials only, issues JWT access tokens for one resource server, and keeps a
// log of every request it answered at GET /__interop/requests (what the tests count), in
// which a client assertion shows only its header and claims, never the signed token itself,
// and a client certificate only its subject.
//
// Without "tls" it speaks plain HTTP and prints one line, "ready <port>", once it listens.
// With "tls": { cert, key, ca } (PEM file paths) it serves HTTPS and offers RFC 8705 mutual-TLS
// client authentication (tls_client_auth, self_signed_tls_client_auth) the way deployments
// often do it: the issuer's own listener asks for no client certificate, a second listener
// (the "mtls" one) asks for one (any, verified against "ca" but never refused by TLS: the
// provider decides), and the discovery document names that listener's token endpoint in
// mtls_endpoint_aliases (RFC 8705 §5). It then prints "ready <port> <mtls port>".
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
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

// The client certificate shown on this request's connection, if any (a plain-HTTP socket
// has no getPeerCertificate; a TLS one that asked for none, or got none, returns {}).
function peerCertificate(ctx) {
  const peer = ctx.socket?.getPeerCertificate?.(false);
  return peer && peer.raw ? new X509Certificate(peer.raw) : undefined;
}

// A certificate's subject as an RFC 4514 string (most significant RDN last), the form a
// client registers as tls_client_auth_subject_dn. Node prints the subject one RDN per line,
// most significant first; the test names need no RFC 4514 escaping.
function subjectDn(certificate) {
  return certificate.subject.split('\n').reverse().join(',');
}

// What the provider compares with a tls_client_auth client's registered subject value.
function certificateSubjectMatches(ctx, property, expected) {
  const certificate = peerCertificate(ctx);
  if (!certificate) return false;
  switch (property) {
    case 'tls_client_auth_subject_dn':
      return subjectDn(certificate) === expected;
    case 'tls_client_auth_san_dns':
      return (certificate.subjectAltName || '').split(', ').includes(`DNS:${expected}`);
    default:
      return false;
  }
}

function mTLS() {
  if (!config.tls) return { enabled: false };
  return {
    enabled: true,
    tlsClientAuth: true,
    selfSignedTlsClientAuth: true,
    certificateBoundAccessTokens: false,
    getCertificate: peerCertificate,
    // tls_client_auth (PKI): the chain was verified against config.tls.ca by Node's TLS.
    certificateAuthorized: (ctx) => ctx.socket?.authorized === true,
    certificateSubjectMatches,
  };
}

function logEntry(ctx, listener) {
  const params = ctx.oidc?.params || {};
  const certificate = peerCertificate(ctx);
  return {
    method: ctx.method,
    path: ctx.path,
    status: ctx.status,
    listener: config.tls ? listener : undefined, // which HTTPS listener: main or mtls
    grant_type: params.grant_type,
    client_id: ctx.oidc?.client?.clientId ?? params.client_id,
    client_auth_method: ctx.path === '/token' ? ctx.oidc?.client?.clientAuthMethod : undefined,
    client_secret_sent: ctx.path === '/token'
      ? params.client_secret !== undefined || ctx.headers.authorization !== undefined
      : undefined,
    client_certificate: certificate ? subjectDn(certificate) : undefined,
    client_certificate_verified: certificate ? ctx.socket.authorized === true : undefined,
    scope: params.scope,
    resource: params.resource,
    assertion: assertionSummary(params.client_assertion),
    error: ctx.status >= 400 ? ctx.body?.error : undefined,
    error_description: ctx.status >= 400 ? ctx.body?.error_description : undefined,
    // Why the provider refused (its error_detail, which it never sends to the client).
    error_detail: ctx.state.errorDetail,
  };
}

function makeProvider(issuer, mtlsOrigin) {
const provider = new Provider(issuer, {
  clients: config.clients,
  scopes: ['openid', ...(config.scopes || 'read write').split(' ')],
  clientBasedCORS: () => false,
  clientAuthMethods: [
    'client_secret_basic', 'client_secret_jwt', 'client_secret_post', 'private_key_jwt',
    ...(config.tls ? ['tls_client_auth', 'self_signed_tls_client_auth'] : []),
  ],
  discovery: mtlsOrigin ? { mtls_endpoint_aliases: { token_endpoint: `${mtlsOrigin}/token` } } : {},
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    revocation: { enabled: false },
    mTLS: mTLS(),
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
provider.on('grant.error', (ctx, err) => { ctx.state.errorDetail = err.error_detail; });

provider.use(async (ctx, next) => {
  if (ctx.path === '/__interop/requests') {
    ctx.body = requests;
    return;
  }
  await next();
  requests.push(logEntry(ctx, ctx.req.interopListener));
});

return provider;
}

// One handler per listener: the provider comes to life once every port is known (its issuer
// and discovery document name them), and each request is tagged with the listener it came in.
let handle = null;
function listener(name) {
  return (req, res) => {
    req.interopListener = name;
    handle(req, res);
  };
}

function listen(server) {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

function servers() {
  if (!config.tls) return [http.createServer(listener('main'))];
  const files = { cert: readFileSync(config.tls.cert), key: readFileSync(config.tls.key) };
  const ca = readFileSync(config.tls.ca);
  return [
    https.createServer(files, listener('main')),
    https.createServer({ ...files, ca, requestCert: true, rejectUnauthorized: false },
      listener('mtls')),
  ];
}

const started = servers();
const ports = await Promise.all(started.map(listen));
const issuer = config.issuer.replace('{port}', String(ports[0]));
let mtlsOrigin = null;
if (ports.length > 1) {
  const alias = new URL(issuer);
  alias.port = String(ports[1]);
  mtlsOrigin = alias.origin;
}
const callback = makeProvider(issuer, mtlsOrigin).callback();
handle = (req, res) => callback(req, res);
console.log(`ready ${ports.join(' ')}`);
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    let open = started.length;
    for (const server of started) {
      server.closeAllConnections?.();
      server.close(() => { open -= 1; if (open === 0) process.exit(0); });
    }
  });
}
