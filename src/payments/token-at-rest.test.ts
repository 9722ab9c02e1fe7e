// Issue 29: a card's `token_id` is a bearer credential for the stored card. The vault keeps
// its keyed hash, the stored first answer (replayed for a repeat of the order) and the
// stored Idempotency-Key answer keep it encrypted: neither the SQLite file and its WAL nor a
// pg_dump holds a token, and the token still pays and is still replayed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { secretsAtRest } from '../test/at-rest.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

function byToken(token_id: string, order_no: string): Record<string, unknown> {
  const body = directPayment(gw.merchant, { token_id, order_no });
  for (const f of ['card', 'expiration_month', 'expiration_year', 'security_code']) delete body[f];
  return body;
}

test('card tokens are not stored in clear; the token still pays and repeats still answer it', async () => {
  const keyed = directPayment(gw.merchant, { token_flag: '1', card: '5555555555554444', order_no: 'TOK-KEYED' });
  const headers = { 'idempotency-key': 'token-at-rest-1' };
  const first = readXml(await gw.post('/v1/authorise', keyed, { headers }));
  const plain = directPayment(gw.merchant, { token_flag: '1', order_no: 'TOK-PLAIN' });
  const second = readXml(await gw.post('/v1/authorise', plain));
  const tokens = [first.token_id as string, second.token_id as string];
  for (const t of tokens) assert.match(t, /^tok_/);

  // The token pays (found by its keyed hash) and the answer names it.
  const paid = readXml(await gw.post('/v1/authorise', byToken(tokens[0] as string, 'TOK-PAY')));
  assert.equal(paid.result_info, '0000:Success');
  assert.equal(paid.card, '555555******4444');
  assert.equal(paid.token_id, tokens[0]);
  const unknown = await gw.post('/v1/authorise', byToken(`${tokens[0]}x`, 'TOK-BAD'));
  assert.equal(unknown.statusCode, 400);

  // Repeats answer the token again: the same order_no and body, and the same Idempotency-Key.
  assert.equal(readXml(await gw.post('/v1/authorise', plain)).token_id, tokens[1]);
  const replayed = await gw.post('/v1/authorise', keyed, { headers });
  assert.equal(replayed.headers['idempotent-replayed'], 'true');
  assert.equal(readXml(replayed).token_id, tokens[0]);
  assert.equal(readXml(await gw.post('/v1/authorise', byToken(tokens[0] as string, 'TOK-PAY'))).token_id, tokens[0]);

  assert.deepEqual(secretsAtRest(gw.database_url, tokens), [], 'the storage holds a card token in clear');
});
