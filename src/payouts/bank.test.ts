// Bank details of payouts (bank.ts): each rail's accepted and refused details as tables,
// the field each refusal names, IBAN and BIC checks, and that no refusal repeats an
// account number or IBAN.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiError } from '../web/errors.js';
import { asApiError } from '../web/outcomes.js';
import { abaProblem, type BankContext, type CheckedBank, checkBankDetails, clabeProblem, clearingSystemFor, LOCAL_RAILS, usesIban } from './bank.js';
import type { BankDetailsInput } from './schema.js';
import { maskAccount } from './tables.js';

const B = 'beneficiary.bank_details';
const local = (payment_currency: string, extra: Partial<BankContext> = {}): BankContext => ({ payment_currency, payment_method: 'LOCAL', ...extra });
const swift = (payment_currency: string, extra: Partial<BankContext> = {}): BankContext => ({ payment_currency, payment_method: 'SWIFT', ...extra });

/** Every number a test sends that is secret: no message may contain one whole. */
const SECRETS = new Set<string>();
const messages: string[] = [];

function refusal(bank: BankDetailsInput | undefined, ctx: BankContext): ApiError {
  for (const v of [bank?.account_number, bank?.iban]) if (v && v.length >= 5) SECRETS.add(v.replace(/[\s-]/g, ''));
  try {
    checkBankDetails(bank, ctx);
  } catch (thrown) {
    // As the acquiring interface answers it.
    const e = asApiError(thrown);
    assert.ok(e, String(thrown));
    assert.equal(e.code, '0400');
    messages.push(e.message);
    return e;
  }
  assert.fail(`accepted ${JSON.stringify(bank)} for ${JSON.stringify(ctx)}`);
}

function refuses(bank: BankDetailsInput | undefined, ctx: BankContext, field: string, words?: RegExp): void {
  const e = refusal(bank, ctx);
  assert.equal(e.field, field, e.message);
  assert.ok(e.message.includes(field), `the message names the field: ${e.message}`);
  if (words) assert.match(e.message, words);
}

function accepts(bank: BankDetailsInput, ctx: BankContext): CheckedBank {
  return checkBankDetails(bank, ctx);
}

const ABA = '011000015';
const DE_IBAN = 'DE89370400440532013000';
const GB_IBAN = 'GB29NWBK60161331926819';
const CLABE = '002010077777777771';

describe('checksums', () => {
  test('ABA routing numbers: prefix and 3-7-1 check digit', () => {
    for (const ok of [ABA, '021000021', '026009593', '121000358', '322271627']) assert.equal(abaProblem(ok), null, ok);
    assert.match(abaProblem('011000016') ?? '', /check digit/);
    assert.match(abaProblem('991000015') ?? '', /routing symbol/);
  });
  test('CLABE check digit', () => {
    assert.equal(clabeProblem(CLABE), null);
    assert.match(clabeProblem('002010077777777772') ?? '', /check digit/);
  });
});

describe('clearingSystemFor', () => {
  const table: Array<[string, string, 'LOCAL' | 'SWIFT', string | null]> = [
    ['US', 'USD', 'LOCAL', 'ACH'],
    ['DE', 'EUR', 'LOCAL', 'SEPA'],
    ['FR', 'EUR', 'LOCAL', 'SEPA'],
    ['GB', 'EUR', 'LOCAL', 'SEPA'],
    ['NO', 'EUR', 'LOCAL', 'SEPA'],
    ['GB', 'GBP', 'LOCAL', 'FASTER_PAYMENTS'],
    ['AU', 'AUD', 'LOCAL', 'BECS'],
    ['NZ', 'NZD', 'LOCAL', 'BECS'],
    ['CA', 'CAD', 'LOCAL', 'EFT'],
    ['JP', 'JPY', 'LOCAL', 'ZENGIN'],
    ['SG', 'SGD', 'LOCAL', 'FAST'],
    ['HK', 'HKD', 'LOCAL', 'FPS'],
    ['IN', 'INR', 'LOCAL', 'NEFT'],
    ['MX', 'MXN', 'LOCAL', 'SPEI'],
    ['CH', 'CHF', 'LOCAL', 'SIC'],
    ['LI', 'CHF', 'LOCAL', 'SIC'],
    ['PL', 'PLN', 'LOCAL', 'ELIXIR'],
    ['SE', 'SEK', 'LOCAL', 'BANKGIROT'],
    ['US', 'EUR', 'LOCAL', null],
    ['DE', 'USD', 'LOCAL', null],
    ['BR', 'BRL', 'LOCAL', null],
    ['US', 'USD', 'SWIFT', 'SWIFT'],
    ['BR', 'BRL', 'SWIFT', 'SWIFT'],
  ];
  for (const [country, currency, method, want] of table) {
    test(`${method} ${country}/${currency} → ${want}`, () => assert.equal(clearingSystemFor(country, currency, method), want));
  }
  test('every listed rail answers its own system', () => {
    for (const r of LOCAL_RAILS) assert.equal(clearingSystemFor(r.country, r.currency, 'LOCAL'), r.system);
  });
  test('usesIban follows the IBAN registry', () => {
    assert.equal(usesIban('DE'), true);
    assert.equal(usesIban('BR'), true);
    assert.equal(usesIban('US'), false);
    assert.equal(usesIban('MA'), false, 'an unofficial IBAN format does not make it required');
  });
});

describe('common rules', () => {
  test('bank_details is required', () => refuses(undefined, local('USD'), B, /is required/));
  test('payment_currency is ISO 4217', () => {
    refuses({ bank_country_code: 'US', account_number: '000123456789', bank_code: ABA }, local('ABC'), 'payment_currency', /ISO 4217/);
    refuses({ bank_country_code: 'US', account_number: '000123456789', bank_code: ABA }, local('XAU'), 'payment_currency');
  });
  test('account_currency is ISO 4217 and equals payment_currency', () => {
    refuses(
      { bank_country_code: 'US', account_currency: 'QQQ', account_number: '000123456789', bank_code: ABA },
      local('USD'),
      `${B}.account_currency`,
      /ISO 4217/,
    );
    refuses(
      { bank_country_code: 'US', account_currency: 'EUR', account_number: '000123456789', bank_code: ABA },
      local('USD'),
      `${B}.account_currency`,
      /payment_currency/,
    );
    assert.equal(
      accepts({ bank_country_code: 'US', account_currency: 'USD', account_number: '000123456789', bank_code: ABA }, local('USD')).local_clearing_system,
      'ACH',
    );
  });
  test('the bank country: bank_country_code, else the IBAN, else the address, else refused', () => {
    refuses({ bank_country_code: 'ZZ', iban: DE_IBAN }, local('EUR'), `${B}.bank_country_code`, /ISO 3166/);
    assert.equal(accepts({ iban: DE_IBAN }, local('EUR')).country, 'DE');
    assert.equal(accepts({ account_number: '000123456789', bank_code: ABA }, local('USD', { fallback_country: 'US' })).country, 'US');
    refuses({ account_number: '000123456789', bank_code: ABA }, local('USD', { fallback_country: 'QQ' }), 'beneficiary.address.country_code', /ISO 3166/);
    refuses({ account_number: '000123456789', bank_code: ABA }, local('USD'), `${B}.bank_country_code`, /is required/);
    assert.equal(accepts({ bank_country_code: 'US', account_number: '000123456789', bank_code: ABA }, local('USD', { fallback_country: 'DE' })).country, 'US');
  });
  test('LOCAL to a pair without a local rail names payment_method', () => {
    refuses(
      { bank_country_code: 'US', account_number: '000123456789', bank_code: ABA },
      local('EUR'),
      'payment_method',
      /LOCAL payouts to US in EUR are not available; use SWIFT/,
    );
    refuses({ bank_country_code: 'BR', account_number: '000123456789' }, local('BRL'), 'payment_method', /to BR in BRL/);
    refuses({ iban: DE_IBAN }, local('USD'), 'payment_method', /to DE in USD/);
  });
});

describe('IBAN', () => {
  test('accepted with spaces, dashes and lowercase; returned in electronic format', () => {
    assert.deepEqual(accepts({ iban: 'de89 3704 0044 0532 0130 00' }, local('EUR')), { local_clearing_system: 'SEPA', country: 'DE', iban: DE_IBAN });
    assert.equal(accepts({ iban: 'FR14-2004-1010-0505-0001-3M02-606' }, local('EUR')).iban, 'FR1420041010050500013M02606');
  });
  const bad: Array<[string, string, RegExp]> = [
    ['check digits', 'DE89370400440532013001', /wrong check digits/],
    ['check digits (swapped)', 'DE98370400440532013000', /wrong check digits/],
    ['length', 'DE8937040044053201300', /has 21 characters.*a DE IBAN has 22/],
    ['format', 'DE89370400440532O13000', /format of a DE IBAN/],
    ['a country without IBANs', 'US64SVBKUS6S3300958879', /US does not use IBANs/],
    ['not an IBAN at all', '12345678', /is not an IBAN/],
    ['a Swiss QR-IBAN', 'CH4431999123000889012', /QR-IBAN/],
  ];
  for (const [what, iban, words] of bad) test(`refused: ${what}`, () => refuses({ iban }, local('EUR'), `${B}.iban`, words));
  test('refused when its country is not the bank’s country', () => {
    refuses({ bank_country_code: 'FR', iban: DE_IBAN }, local('EUR'), `${B}.iban`, /is a DE IBAN .*but the bank’s country is FR/);
    refuses({ bank_country_code: 'US', iban: DE_IBAN, account_number: '000123456789', bank_code: ABA }, local('USD'), `${B}.iban`, /DE IBAN/);
  });
  test('a message shows at most the last four characters', () => {
    const e = refusal({ iban: 'DE89370400440532013001' }, local('EUR'));
    assert.match(e.message, /ending 3001/);
    assert.ok(!e.message.includes('370400440532013001'));
  });
});

describe('BIC', () => {
  test('uppercased; shape and country checked', () => {
    assert.equal(accepts({ iban: DE_IBAN, swift_code: 'deutdeff' }, local('EUR')).swift_code, 'DEUTDEFF');
    assert.equal(accepts({ iban: DE_IBAN, swift_code: 'DEUTDEFF500' }, local('EUR')).swift_code, 'DEUTDEFF500');
    refuses({ iban: DE_IBAN, swift_code: 'DEUTDEF' }, local('EUR'), `${B}.swift_code`, /8 or 11/);
    refuses({ iban: DE_IBAN, swift_code: 'DEUTDEFF5' }, local('EUR'), `${B}.swift_code`, /8 or 11/);
    refuses({ iban: DE_IBAN, swift_code: 'DEUTQQFF' }, local('EUR'), `${B}.swift_code`, /QQ .*is not a country/);
    refuses({ iban: DE_IBAN, swift_code: 'DEU1DEFF' }, local('EUR'), `${B}.swift_code`, /is not a BIC/);
  });
  test('SEPA takes a BIC of another country (routing is by IBAN)', () => {
    assert.equal(accepts({ iban: DE_IBAN, swift_code: 'BNPAFRPP' }, local('EUR')).local_clearing_system, 'SEPA');
  });
});

describe('SEPA and the IBAN rails', () => {
  test('accepted', () => {
    assert.equal(accepts({ bank_country_code: 'NL', iban: 'NL91ABNA0417164300' }, local('EUR')).local_clearing_system, 'SEPA');
    assert.equal(accepts({ iban: GB_IBAN }, local('EUR')).local_clearing_system, 'SEPA');
    assert.equal(accepts({ iban: 'CH9300762011623852957' }, local('CHF')).local_clearing_system, 'SIC');
    assert.equal(accepts({ iban: 'PL61109010140000071219812874' }, local('PLN')).local_clearing_system, 'ELIXIR');
    assert.equal(accepts({ iban: 'SE4550000000058398257466' }, local('SEK')).local_clearing_system, 'BANKGIROT');
  });
  test('the IBAN is required', () => {
    refuses({ bank_country_code: 'DE', account_number: '0532013000' }, local('EUR'), `${B}.iban`, /required for SEPA/);
    refuses({ bank_country_code: 'CH', account_number: '0532013000' }, local('CHF'), `${B}.iban`, /required for SIC/);
  });
});

/** [what, bank details, context, the refused field or null when accepted, words]. */
type Row = [string, BankDetailsInput, BankContext, string | null, RegExp?];

const US = (more: BankDetailsInput): BankDetailsInput => ({ bank_country_code: 'US', ...more });
const rails: Record<string, Row[]> = {
  ACH: [
    ['sandbox account 000111111116', US({ account_number: '000111111116', bank_code: ABA }), local('USD'), null],
    ['sandbox account 000222222226', US({ account_number: '000222222226', bank_code: ABA }), local('USD'), null],
    ['account 000123456789', US({ account_number: '000123456789', bank_code: ABA }), local('USD'), null],
    ['account with spaces, routing with dashes', US({ account_number: '0001 2345 6789', bank_code: '011-000-015' }), local('USD'), null],
    ['no account number', US({ bank_code: ABA }), local('USD'), `${B}.account_number`, /required for ACH/],
    ['account too short', US({ account_number: '123', bank_code: ABA }), local('USD'), `${B}.account_number`, /4 to 17 digits/],
    ['account too long', US({ account_number: '123456789012345678', bank_code: ABA }), local('USD'), `${B}.account_number`, /4 to 17 digits/],
    ['account with letters', US({ account_number: '0001234567AB', bank_code: ABA }), local('USD'), `${B}.account_number`, /digits/],
    ['no routing number', US({ account_number: '000123456789' }), local('USD'), `${B}.bank_code`, /ABA routing number\) is required/],
    ['routing number of 8 digits', US({ account_number: '000123456789', bank_code: '01100001' }), local('USD'), `${B}.bank_code`, /9-digit/],
    ['routing check digit', US({ account_number: '000123456789', bank_code: '011000016' }), local('USD'), `${B}.bank_code`, /check digit/],
    ['routing prefix', US({ account_number: '000123456789', bank_code: '991000015' }), local('USD'), `${B}.bank_code`, /routing symbol/],
  ],
  FASTER_PAYMENTS: [
    ['account and sort code', { bank_country_code: 'GB', account_number: '31926819', bank_code: '60-16-13' }, local('GBP'), null],
    ['an IBAN alone', { iban: GB_IBAN }, local('GBP'), null],
    ['an IBAN with the same account and sort code', { iban: GB_IBAN, account_number: '31926819', bank_code: '601613' }, local('GBP'), null],
    ['an IBAN with another account', { iban: GB_IBAN, account_number: '31926810' }, local('GBP'), `${B}.account_number`, /not the account number in the iban/],
    ['an IBAN with another sort code', { iban: GB_IBAN, bank_code: '601614' }, local('GBP'), `${B}.bank_code`, /not the sort code in the iban/],
    ['account of 7 digits', { bank_country_code: 'GB', account_number: '3192681', bank_code: '601613' }, local('GBP'), `${B}.account_number`, /8 digits/],
    ['sort code of 5 digits', { bank_country_code: 'GB', account_number: '31926819', bank_code: '60161' }, local('GBP'), `${B}.bank_code`, /6-digit sort code/],
    ['no sort code', { bank_country_code: 'GB', account_number: '31926819' }, local('GBP'), `${B}.bank_code`, /sort code\) is required.*or an iban/],
    ['nothing', { bank_country_code: 'GB' }, local('GBP'), `${B}.account_number`, /required for FASTER_PAYMENTS payouts \(or an iban/],
  ],
  BECS: [
    ['AU account and BSB', { bank_country_code: 'AU', account_number: '12345678', bank_code: '062-000' }, local('AUD'), null],
    ['AU account of 4 digits', { bank_country_code: 'AU', account_number: '1234', bank_code: '062000' }, local('AUD'), `${B}.account_number`, /5 to 9 digits/],
    ['AU BSB of 7 digits', { bank_country_code: 'AU', account_number: '12345678', bank_code: '0620001' }, local('AUD'), `${B}.bank_code`, /BSB/],
    ['AU no BSB', { bank_country_code: 'AU', account_number: '12345678' }, local('AUD'), `${B}.bank_code`, /BSB\) is required/],
    ['NZ account with dashes', { bank_country_code: 'NZ', account_number: '12-3456-7890123-001' }, local('NZD'), null],
    ['NZ account of 12 digits', { bank_country_code: 'NZ', account_number: '123456789012' }, local('NZD'), `${B}.account_number`, /15 or 16 digits/],
  ],
  EFT: [
    ['account, institution and transit', { bank_country_code: 'CA', account_number: '1234567', bank_code: '003-12345' }, local('CAD'), null],
    [
      'bank code of 9 digits',
      { bank_country_code: 'CA', account_number: '1234567', bank_code: '000312345' },
      local('CAD'),
      `${B}.bank_code`,
      /institution number/,
    ],
    [
      'account of 6 digits',
      { bank_country_code: 'CA', account_number: '123456', bank_code: '00312345' },
      local('CAD'),
      `${B}.account_number`,
      /7 to 12 digits/,
    ],
  ],
  ZENGIN: [
    ['account and bank-branch code', { bank_country_code: 'JP', account_number: '1234567', bank_code: '0001-001' }, local('JPY'), null],
    ['account of 8 digits', { bank_country_code: 'JP', account_number: '12345678', bank_code: '0001001' }, local('JPY'), `${B}.account_number`, /7 digits/],
    ['bank code of 4 digits', { bank_country_code: 'JP', account_number: '1234567', bank_code: '0001' }, local('JPY'), `${B}.bank_code`, /branch code/],
  ],
  FAST: [
    ['account and bank code', { bank_country_code: 'SG', account_number: '0123456789', bank_code: '7171001' }, local('SGD'), null],
    ['account and a Singapore BIC', { bank_country_code: 'SG', account_number: '0123456789', swift_code: 'DBSSSGSG' }, local('SGD'), null],
    ['a BIC of another country', { bank_country_code: 'SG', account_number: '0123456789', swift_code: 'HSBCHKHH' }, local('SGD'), `${B}.swift_code`, /HK/],
    ['no bank code nor BIC', { bank_country_code: 'SG', account_number: '0123456789' }, local('SGD'), `${B}.bank_code`, /or a swift_code/],
    [
      'account with symbols',
      { bank_country_code: 'SG', account_number: '0123/456789', bank_code: '7171001' },
      local('SGD'),
      `${B}.account_number`,
      /letters or digits/,
    ],
  ],
  FPS: [
    ['account and clearing code', { bank_country_code: 'HK', account_number: '123456789012', bank_code: '004' }, local('HKD'), null],
    ['account and a Hong Kong BIC', { bank_country_code: 'HK', account_number: '123456789012', swift_code: 'HSBCHKHHHKH' }, local('HKD'), null],
    ['clearing code of 4 digits', { bank_country_code: 'HK', account_number: '123456789012', bank_code: '0040' }, local('HKD'), `${B}.bank_code`, /3-digit/],
  ],
  NEFT: [
    ['account and IFSC (any case)', { bank_country_code: 'IN', account_number: '123456789012', bank_code: 'hdfc0000001' }, local('INR'), null],
    ['IFSC without the 0', { bank_country_code: 'IN', account_number: '123456789012', bank_code: 'HDFC1000001' }, local('INR'), `${B}.bank_code`, /IFSC/],
    ['account of 8 digits', { bank_country_code: 'IN', account_number: '12345678', bank_code: 'HDFC0000001' }, local('INR'), `${B}.account_number`, /9 to 18/],
  ],
  SPEI: [
    ['a CLABE', { bank_country_code: 'MX', account_number: CLABE }, local('MXN'), null],
    [
      'a CLABE with a wrong check digit',
      { bank_country_code: 'MX', account_number: '002010077777777772' },
      local('MXN'),
      `${B}.account_number`,
      /CLABE.*check digit/,
    ],
    ['17 digits', { bank_country_code: 'MX', account_number: '00201007777777777' }, local('MXN'), `${B}.account_number`, /18-digit CLABE/],
  ],
  SWIFT: [
    ['sandbox account 000111111116 to the US', US({ account_number: '000111111116', swift_code: 'CHASUS33' }), swift('USD'), null],
    ['sandbox account 000222222226 to the US', US({ account_number: '000222222226', swift_code: 'CHASUS33XXX' }), swift('USD'), null],
    [
      'an account number to Brazil, which uses IBANs',
      { bank_country_code: 'BR', account_number: '000123456789', swift_code: 'BRASBRRJ' },
      swift('BRL'),
      `${B}.iban`,
      /BR, which uses IBANs/,
    ],
    ['account 000123456789 to China', { bank_country_code: 'CN', account_number: '000123456789', swift_code: 'BKCHCNBJ' }, swift('CNY'), null],
    ['an IBAN to Germany', { iban: DE_IBAN, swift_code: 'DEUTDEFF' }, swift('EUR'), null],
    ['to Germany in USD (any currency)', { iban: DE_IBAN, swift_code: 'DEUTDEFF' }, swift('USD'), null],
    ['no BIC', US({ account_number: '000111111116' }), swift('USD'), `${B}.swift_code`, /required for SWIFT/],
    [
      'a BIC of another country',
      US({ account_number: '000111111116', swift_code: 'DEUTDEFF' }),
      swift('USD'),
      `${B}.swift_code`,
      /in DE .*bank’s country is US/,
    ],
    ['a malformed BIC', US({ account_number: '000111111116', swift_code: 'CHAS-US33' }), swift('USD'), `${B}.swift_code`, /is not a BIC/],
    [
      'an account number to Germany instead of the IBAN',
      { bank_country_code: 'DE', account_number: '0532013000', swift_code: 'DEUTDEFF' },
      swift('EUR'),
      `${B}.iban`,
      /required/,
    ],
    ['no account number to the US', US({ swift_code: 'CHASUS33' }), swift('USD'), `${B}.account_number`, /required for SWIFT payouts to US$/],
    ['account of 3 characters', US({ account_number: '123', swift_code: 'CHASUS33' }), swift('USD'), `${B}.account_number`, /4 to 34/],
    ['account with symbols', US({ account_number: '0001/1111', swift_code: 'CHASUS33' }), swift('USD'), `${B}.account_number`, /letters or digits/],
  ],
};

for (const [system, rows] of Object.entries(rails)) {
  describe(`rail ${system}`, () => {
    for (const [what, bank, ctx, field, words] of rows) {
      test(`${field ? 'refused' : 'accepted'}: ${what}`, () => {
        if (field) return refuses(bank, ctx, field, words);
        assert.equal(accepts(bank, ctx).local_clearing_system, system);
      });
    }
  });
}

describe('what is returned', () => {
  test('normalised identifiers', () => {
    assert.deepEqual(accepts(US({ account_number: ' 0001-1111-1116 ', bank_code: '011 000 015' }), local('USD')), {
      local_clearing_system: 'ACH',
      country: 'US',
      account_number: '000111111116',
      bank_code: ABA,
    });
    assert.deepEqual(accepts(US({ account_number: '000111111116', swift_code: 'chas us33' }), swift('USD')), {
      local_clearing_system: 'SWIFT',
      country: 'US',
      swift_code: 'CHASUS33',
      account_number: '000111111116',
    });
  });
  test('empty strings count as absent', () => {
    assert.equal(
      accepts(US({ account_number: '000111111116', bank_code: ABA, iban: '', swift_code: '', account_currency: '' }), local('USD')).local_clearing_system,
      'ACH',
    );
  });
});

describe('maskAccount', () => {
  test('the last four only', () => {
    assert.equal(maskAccount('000111111116'), '••••1116');
    assert.equal(maskAccount(DE_IBAN), '••••3000');
    assert.equal(maskAccount('12-3456-7890123-001'), '••••3001');
    assert.equal(maskAccount('1234'), '••••');
    assert.equal(maskAccount(''), '••••');
  });
});

// Runs last (node:test runs top-level suites in order): every message collected above.
test('no refusal repeats a full account number or IBAN', () => {
  assert.ok(messages.length > 40, `refusals were collected (${messages.length})`);
  for (const m of messages) {
    for (const secret of SECRETS) assert.ok(!m.includes(secret), `"${m}" repeats ${maskAccount(secret)}`);
    // Nor any other long number (routing numbers and bank codes are not echoed either).
    assert.doesNotMatch(m, /\d{9,}/, `"${m}" holds a long number`);
  }
});
