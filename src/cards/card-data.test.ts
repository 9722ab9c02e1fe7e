// PCI DSS 3.3.1 / 3.4.1 / 3.5.1: after real payments through a real process, neither the
// database nor the logs hold a card number, a security code or a secret in plain text.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sign } from '../crypto/signature.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { ENGINE } from '../test/harness.js';
import { createMerchant, databaseDump, type FreshDatabase, freePort, freshDatabase, type GatewayProcess, gatewayEnv, startGateway } from '../test/process.js';
import { parseXmlBody } from '../web/xml.js';

const CARDS = ['4242424242424242', '5555555555554444', '378282246310005', '4000000000000002', '4000000000003220', '4242424242424241'];
// A 4-digit code is distinctive enough to scan raw bytes for; 3-digit codes are checked in the stored rows.
const AMEX_CODE = '7391';

let db: FreshDatabase;
let gw: GatewayProcess;
let merchant: CreatedMerchant;

before(async () => {
  db = await freshDatabase(ENGINE, 'card');
  const env = gatewayEnv(db, await freePort(), { TOLLGATE_LOG_LEVEL: 'trace', TOLLGATE_WORKER: '0' });
  merchant = createMerchant(env, 'Card data test');
  gw = await startGateway(env, { capture_output: true });
});
after(async () => {
  if (gw.child.exitCode === null) await gw.crash();
  await db.drop();
});

async function pay(fields: Record<string, unknown>, signIt = true): Promise<{ status: number; body: string }> {
  const body: Record<string, unknown> = {
    merchant_id: merchant.merchant_id,
    account_id: merchant.account_id,
    order_no: `CD-${Math.random().toString(36).slice(2)}`,
    currency: 'USD',
    amount: '10.00',
    expiration_month: '12',
    expiration_year: '2035',
    security_code: '321',
    ...fields,
  };
  body.encryption_data = signIt ? sign(body, merchant.secret_key) : 'f'.repeat(64);
  const r = await fetch(`${gw.url}/v1/authorise`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: r.status, body: await r.text() };
}

test('card numbers, security codes and secrets are nowhere in the database or the logs', async () => {
  const answers: string[] = [];
  for (const card of CARDS) {
    const code = card.startsWith('37') ? AMEX_CODE : '321';
    const r = await pay({ card, security_code: code, token_flag: '1' });
    assert.equal(r.status, 200, r.body);
    answers.push(r.body);
  }
  // Refusals too: bad security code length, wrong signature, unknown field.
  answers.push((await pay({ card: CARDS[2], security_code: '123' })).body);
  answers.push((await pay({ card: CARDS[0] }, false)).body);
  answers.push((await pay({ card: CARDS[0], pan: CARDS[0] })).body);

  // Graceful stop (SIGTERM) flushes logs and closes the database; the process exits 0.
  await gw.stop();
  assert.equal(await gw.exited, 0, 'SIGTERM ends the process cleanly');

  const logs = gw.output();
  const dump = await databaseDump(db);
  assert.ok(dump.length > 0 && logs.length > 0);
  for (const card of CARDS) {
    assert.ok(!logs.includes(card), `logs hold ${card.slice(0, 6)}…`);
    assert.ok(!dump.includes(card), `database holds ${card.slice(0, 6)}…`);
    for (const a of answers) assert.ok(!a.includes(card), 'an answer holds a card number');
  }
  const bounded = new RegExp(`(^|[^0-9A-Za-z])${AMEX_CODE}([^0-9A-Za-z]|$)`);
  assert.ok(!bounded.test(logs), 'logs hold the security code');
  assert.ok(!bounded.test(dump), 'database holds the security code');
  assert.ok(!dump.includes('security_code'), 'no stored field is named security_code');
  assert.ok(!dump.includes(merchant.secret_key) && !logs.includes(merchant.secret_key), 'the secret key is in plain text');
  assert.ok(!dump.includes(merchant.webhook_secret.slice(6)) && !logs.includes(merchant.webhook_secret.slice(6)), 'the webhook secret is in plain text');
  // What is shown is only BIN + last four.
  assert.equal(parseXmlBody(answers[0] as string).card, '424242******4242');
  assert.ok(dump.includes('424242******4242'));
});
