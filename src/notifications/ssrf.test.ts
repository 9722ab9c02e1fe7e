// The SSRF guard (docs/contract.md §11, field-facts "SSRF"): the real guard with the system
// resolver, one line per target; and the check when a payment arrives.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { checkTarget, classifyAddress, UnsafeTargetError } from './ssrf.js';

describe('targets refused when private targets are not allowed', () => {
  const refused: Array<[url: string, reason: RegExp]> = [
    ['http://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
    ['http://[::1]/hook', /::1 is a loopback address/],
    ['http://10.0.0.1/hook', /10\.0\.0\.1 is a private address/],
    ['http://172.16.5.4/hook', /private/],
    ['http://192.168.1.1/hook', /private/],
    ['http://169.254.169.254/latest/meta-data/', /metadata/],
    ['http://169.254.1.1/', /linkLocal/],
    ['http://100.64.0.1/', /carrierGradeNat/],
    ['http://198.18.0.1/', /reserved/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://0x7f000001/', /127\.0\.0\.1 is a loopback/],
    ['http://2130706433/', /127\.0\.0\.1 is a loopback/],
    ['http://0177.0.0.1/', /127\.0\.0\.1 is a loopback/],
    ['http://0x0a.0.0.1/', /10\.0\.0\.1 is a private/],
    ['http://[::ffff:10.0.0.1]/', /10\.0\.0\.1 is a private/],
    ['http://[::ffff:127.0.0.1]/', /127\.0\.0\.1 is a loopback/],
    ['http://[::ffff:169.254.169.254]/', /metadata/],
    ['http://[fd00:ec2::254]/', /metadata/],
    ['http://[fc00::1]/', /uniqueLocal/],
    ['http://[fe80::1]/', /linkLocal/],
    ['http://[64:ff9b::a00:1]/', /rfc6052/],
    // IPv4-compatible IPv6 (::/96; issue 29): every spelling of 127.0.0.1, 169.254.169.254, 10.0.0.1 and a public address.
    ['http://[::127.0.0.1]/', /::7f00:1 is an IPv4-compatible \(::\/96\) address/],
    ['http://[::7f00:1]/', /::7f00:1 is an IPv4-compatible/],
    ['http://[0:0:0:0:0:0:7f00:1]/', /::7f00:1 is an IPv4-compatible/],
    ['http://[::a9fe:a9fe]/latest/meta-data/', /::a9fe:a9fe is an IPv4-compatible/],
    ['http://[::169.254.169.254]/', /::a9fe:a9fe is an IPv4-compatible/],
    ['http://[::a00:1]/', /::a00:1 is an IPv4-compatible/],
    ['http://[::5db8:d822]/', /::5db8:d822 is an IPv4-compatible/],
    ['http://[::2]/', /::2 is an IPv4-compatible/],
    ['http://localhost:8080/hook', /loopback/],
    ['http://224.0.0.1/', /multicast/],
    ['ftp://example.com/', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['gopher://127.0.0.1/', /http or https/],
    ['not a url', /not a valid URL/],
    ['http://no-such-host.invalid/', /could not be resolved/],
  ];
  for (const [url, reason] of refused) {
    test(`${url} is refused`, async () => {
      await assert.rejects(checkTarget(url, { allow_private: false }), (e: Error) => {
        assert.ok(e instanceof UnsafeTargetError);
        assert.match(e.message, reason);
        return true;
      });
    });
  }

  test('a public address is accepted and pinned', async () => {
    const t = await checkTarget('https://93.184.216.34:8443/hook?x=1', { allow_private: false });
    assert.equal(t.address, '93.184.216.34');
    assert.equal(t.family, 4);
    const t6 = await checkTarget('https://[2606:4700::1111]/', { allow_private: false });
    assert.equal(t6.family, 6);
  });

  test('one forbidden record among several refuses the name (a record may be chosen at connect time)', async () => {
    const resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ];
    await assert.rejects(checkTarget('https://mixed.example/', { allow_private: false, resolver }), /10\.0\.0\.1 is a private/);
  });

  // A name whose AAAA record is IPv4-compatible (::/96), in the spellings a resolver may print it.
  for (const address of ['::7f00:1', '::127.0.0.1', '::a9fe:a9fe', '::169.254.169.254', '0:0:0:0:0:0:a00:1']) {
    test(`a name resolving to ${address} is refused`, async () => {
      const resolver = async () => [{ address, family: 6 }];
      await assert.rejects(checkTarget('https://compat.example/', { allow_private: false, resolver }), (e: Error) => {
        assert.ok(e instanceof UnsafeTargetError);
        assert.match(e.message, /resolves to a forbidden address: .* is an IPv4-compatible \(::\/96\) address/);
        return true;
      });
    });
  }
});

describe('TOLLGATE_ALLOW_PRIVATE_WEBHOOKS=1', () => {
  const table: Array<[address: string, verdict: 'ok' | RegExp]> = [
    ['127.0.0.1', 'ok'],
    ['::1', 'ok'],
    ['10.0.0.1', 'ok'],
    ['192.168.0.10', 'ok'],
    ['169.254.169.254', /metadata/],
    ['0.0.0.0', /unspecified/],
    ['255.255.255.255', /broadcast/],
    // ::/96 is a special range, not a private one: allowing private targets does not open it.
    ['::7f00:1', /IPv4-compatible/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['::a9fe:a9fe', /IPv4-compatible/],
    ['::a00:1', /IPv4-compatible/],
  ];
  for (const [address, verdict] of table) {
    test(`${address} → ${verdict === 'ok' ? 'allowed' : 'still refused'}`, () => {
      const why = classifyAddress(address, true);
      if (verdict === 'ok') assert.equal(why, null);
      else assert.match(why ?? '', verdict);
    });
  }
});

describe('notify_url checked when the payment arrives', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testGateway({ settings: { allow_private_webhooks: false } });
  });
  after(async () => {
    await gw.close();
  });

  const cases: Array<[url: string, problem: RegExp]> = [
    ['http://10.0.0.1/hook', /notify_url resolves to a forbidden address: 10\.0\.0\.1 is a private address/],
    ['http://localhost/hook', /notify_url resolves to a forbidden address/],
    ['http://0x7f000001/hook', /loopback/],
    ['http://[::127.0.0.1]/hook', /notify_url resolves to a forbidden address: ::7f00:1 is an IPv4-compatible/],
    ['http://no-such-host.invalid/hook', /notify_url host "no-such-host\.invalid" could not be resolved/],
  ];
  for (const [url, problem] of cases) {
    test(`${url}: 400 naming notify_url, nothing stored`, async () => {
      const body = directPayment(gw.merchant, { notify_url: url });
      const res = await gw.post('/v1/authorise', body);
      assert.equal(res.statusCode, 400);
      const x = readXml(res);
      assert.equal(x.error_field, 'notify_url');
      assert.match(x.error_message, problem);
      const stored = await gw.runtime.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('order_no', '=', body.order_no as string)
        .execute();
      assert.equal(stored.length, 0);
    });
  }

  test('a public notify_url is accepted', async () => {
    const res = await gw.post('/v1/authorise', directPayment(gw.merchant, { notify_url: 'https://93.184.216.34/hook' }));
    assert.equal(res.statusCode, 200);
  });
});
