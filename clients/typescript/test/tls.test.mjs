// TLS: the client trusts the CA it is given and reaches a `ctxd serve --tls-cert/--tls-key`
// server; without that CA, or in plaintext, it does not. The certificates (a CA and a
// server certificate for 127.0.0.1 and localhost) are made here with the openssl command.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { CtxdClient, NotFoundError, UnavailableError } from 'ctxd';

import { startServer } from './server.mjs';

function haveOpenssl() {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function makeCertificates() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxd-ts-tls-'));
  const file = (name) => path.join(dir, name);
  const openssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=ctxd test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  openssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  fs.writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'));
  return { dir, ca: fs.readFileSync(file('ca.pem')), cert: file('server.pem'), key: file('server.key') };
}

test('TLS with the CA given; refused without it or in plaintext', { skip: !haveOpenssl() && 'no openssl command' }, async () => {
  const certs = makeCertificates();
  const tls = { rootCerts: certs.ca };
  const server = await startServer(undefined, ['--tls-cert', certs.cert, '--tls-key', certs.key], { tls });
  const once = { retry: { maxAttempts: 1 }, timeoutMs: 5_000 };
  const trusted = new CtxdClient(server.addr, { tls, apiKey: process.env.CTXD_TEST_API_KEY || undefined });
  const byName = new CtxdClient(`localhost:${server.addr.split(':')[1]}`, { ...once, tls });
  const systemRoots = new CtxdClient(server.addr, { ...once, tls: true });
  const plaintext = new CtxdClient(server.addr, once);
  try {
    const session = await trusted.createSession();
    const appended = await session.append([{ role: 'user', content: 'over TLS' }]);
    assert.deepEqual(appended.seqs, [1]);
    await assert.rejects(byName.session('missing').get(), NotFoundError, 'the name localhost is in the certificate too');
    await assert.rejects(systemRoots.session('missing').get(), UnavailableError, 'an unknown CA is refused');
    await assert.rejects(plaintext.session('missing').get(), UnavailableError, 'plaintext is refused');
    await session.delete();
  } finally {
    for (const client of [trusted, byName, systemRoots, plaintext]) client.close();
    await server.stop();
    fs.rmSync(certs.dir, { recursive: true, force: true });
  }
});
