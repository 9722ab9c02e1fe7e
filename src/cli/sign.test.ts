// `npx tollgate sign` (issue 9): the canonical string and signature of a body, through the
// real process, against both test vectors of docs/contract.md §2, in every body shape the server reads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../test/process.js';

const SECRET = '0123456789abcdef0123456789abcdef';

const VECTOR_1 = {
  body: '{"merchant_id":"10001","account_id":"20001","order_no":"ORD-1001","currency":"USD","amount":"10.00","note":"","card":"4242424242424242","checkout_time":1763596800,"cart_items":[{"basic_item_data":{"name":"Tee","quantity":"1","price":{"amount_usd":10.5,"amount_local_currency":10.5,"currency":"USD"}}}],"encryption_data":"ignored"}',
  canonical:
    'account_id=20001&amount=10.00&card=4242424242424242&cart_items[0].basic_item_data.name=Tee&cart_items[0].basic_item_data.price.amount_local_currency=10.5&cart_items[0].basic_item_data.price.amount_usd=10.5&cart_items[0].basic_item_data.price.currency=USD&cart_items[0].basic_item_data.quantity=1&checkout_time=1763596800&currency=USD&merchant_id=10001&order_no=ORD-1001',
  signature: 'b824c592e22aeae2413b1a8e0aa03b985105333d2e901c2dc8d6a886b15a4ba2',
};

const VECTOR_2 = {
  body: '{"merchant_id":"10001","account_id":"20001","capture_orders":[{"transaction_id":"T1","order_no":"A","currency":"USD","amount":"10.00"},{"transaction_id":"T2","order_no":"B","currency":"JPY","amount":"1200"}]}',
  form: 'merchant_id=10001&account_id=20001&capture_orders[0][transaction_id]=T1&capture_orders[0][order_no]=A&capture_orders[0][currency]=USD&capture_orders[0][amount]=10.00&capture_orders[1][transaction_id]=T2&capture_orders[1][order_no]=B&capture_orders[1][currency]=JPY&capture_orders[1][amount]=1200',
  xml: '<request><merchant_id>10001</merchant_id><account_id>20001</account_id><capture_orders><transaction_id>T1</transaction_id><order_no>A</order_no><currency>USD</currency><amount>10.00</amount></capture_orders><capture_orders><transaction_id>T2</transaction_id><order_no>B</order_no><currency>JPY</currency><amount>1200</amount></capture_orders></request>',
  canonical:
    'account_id=20001&capture_orders[0].amount=10.00&capture_orders[0].currency=USD&capture_orders[0].order_no=A&capture_orders[0].transaction_id=T1&capture_orders[1].amount=1200&capture_orders[1].currency=JPY&capture_orders[1].order_no=B&capture_orders[1].transaction_id=T2&merchant_id=10001',
  signature: '78918cfb5ae4b1520522a462e5b7d4375a2de3c8b26234a52bd30d691244fc7a',
};

function sign(args: string[], input: string, env: Record<string, string> = {}) {
  const clean = { ...process.env };
  delete clean.TOLLGATE_SECRET;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/tollgate.js'), 'sign', ...args], {
    env: { ...clean, ...env },
    cwd: ROOT,
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('both test vectors: the exact canonical string and signature; the body’s own encryption_data is left out and compared', () => {
  const one = sign(['--secret', SECRET], VECTOR_1.body);
  assert.equal(one.status, 0, one.stderr);
  assert.equal(
    one.stdout,
    `canonical_string  ${VECTOR_1.canonical}\nencryption_data   ${VECTOR_1.signature}\nthe body's encryption_data differs (signed with another secret, or another canonical string)\n`,
  );
  const two = sign(['--secret', SECRET], VECTOR_2.body);
  assert.equal(two.status, 0, two.stderr);
  assert.equal(two.stdout, `canonical_string  ${VECTOR_2.canonical}\nencryption_data   ${VECTOR_2.signature}\n`);
  const signed = JSON.stringify({ ...JSON.parse(VECTOR_2.body), encryption_data: VECTOR_2.signature });
  assert.match(sign(['--secret', SECRET], signed).stdout, /the body's encryption_data matches\n$/);
});

test('form and XML bodies are read as the server reads them: the same fields sign the same', () => {
  for (const body of [VECTOR_2.form, VECTOR_2.xml]) {
    const r = sign(['--secret', SECRET, '--json'], body);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { canonical_string: VECTOR_2.canonical, encryption_data: VECTOR_2.signature });
  }
});

test('the secret from TOLLGATE_SECRET, the body from --file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-sign-'));
  try {
    const file = path.join(dir, 'body.json');
    fs.writeFileSync(file, VECTOR_1.body);
    const r = sign(['--file', file, '--json'], '', { TOLLGATE_SECRET: SECRET });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { canonical_string: VECTOR_1.canonical, encryption_data: VECTOR_1.signature, body_signature_matches: false });
    const missing = sign(['--file', path.join(dir, 'nope.json')], '', { TOLLGATE_SECRET: SECRET });
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /cannot read .*nope\.json: ENOENT/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('bad input is refused with a clear message and no card number echoed', () => {
  const badJson = sign(['--secret', SECRET], '{"card":"4242424242424242",');
  assert.equal(badJson.status, 1);
  assert.equal(badJson.stdout, '');
  assert.match(badJson.stderr, /^error: cannot read the body: malformed JSON/);
  assert.ok(!badJson.stderr.includes('4242424242424242'));
  const empty = sign(['--secret', SECRET], '  \n');
  assert.equal(empty.status, 1);
  assert.match(empty.stderr, /the body is empty/);
  const notObject = sign(['--secret', SECRET], '[1,2]');
  assert.equal(notObject.status, 1);
  assert.match(notObject.stderr, /must be an object/);
  const noSecret = sign([], VECTOR_2.body);
  assert.equal(noSecret.status, 2);
  assert.match(noSecret.stderr, /--secret or the TOLLGATE_SECRET environment variable/);
  const help = sign(['--help'], '');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /TOLLGATE_SECRET/);
});
