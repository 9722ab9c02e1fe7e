// Goal: the APM catalogue is exactly the published table (one row per method: currencies,
// countries, required fields, shopper flow, expiry), the Brazilian document checks follow
// the official check-digit algorithm, and `checkApmFields` names the first missing or wrong
// field of every method with a 400, never repeating a document number. Pure: no database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, test } from 'node:test';
import { APM_METHODS, apmMethod, appliesTo, CARD_BRANDS } from '../methods/catalogue.js';
import { IDEAL_TEST_BANKS } from '../processors/sandbox/apm.js';
import { apiErrorOf } from '../web/outcomes.js';
import { BRAZILIAN_STATES, brazilianDocument, isBrazilianPostalCode } from './documents.js';
import { checkApmFields } from './fields.js';

/** The refusal of a method's fields as the acquiring interface answers it. */
const fieldsAnswer = (m: Parameters<typeof checkApmFields>[0], body: Record<string, unknown>) => {
  const r = checkApmFields(m, body);
  return r ? apiErrorOf(r.refusal) : null;
};

const MINUTE = 60_000;

describe('the catalogue', () => {
  test('one row per method, exactly as published', () => {
    const rows = APM_METHODS.map((m) => ({
      payment_method: m.payment_method,
      currencies: m.currencies,
      countries: m.countries,
      required: m.required.map((f) => f.path),
      flow: m.flow,
      expiry_ms: m.expiry_ms,
    }));
    assert.deepEqual(rows, [
      {
        payment_method: 'pix',
        currencies: ['BRL'],
        countries: ['BR'],
        required: ['person.document_number', 'person.email'],
        flow: 'approve_decline',
        expiry_ms: 30 * MINUTE,
      },
      {
        payment_method: 'boleto',
        currencies: ['BRL'],
        countries: ['BR'],
        required: [
          'person.document_number',
          'person.address_street',
          'person.address_number',
          'person.address_postal_code',
          'person.address_city',
          'person.address_state',
          'person.address_country',
        ],
        flow: 'slip',
        expiry_ms: 3 * 24 * 60 * MINUTE,
      },
      { payment_method: 'ideal', currencies: ['EUR'], countries: ['NL'], required: ['bank_code'], flow: 'approve_decline', expiry_ms: 15 * MINUTE },
    ]);
  });

  test('docs/interface.md lists every method with its currencies and countries', () => {
    const doc = fs.readFileSync(new URL('../../docs/interface.md', import.meta.url), 'utf8');
    for (const m of APM_METHODS)
      assert.ok(doc.includes(`| \`${m.payment_method}\` | ${m.currencies.join(', ')} | ${m.countries.join(', ')} |`), m.payment_method);
  });

  test('docs/interface.md lists the iDEAL bank list exactly', () => {
    const doc = fs.readFileSync(new URL('../../docs/interface.md', import.meta.url), 'utf8');
    const listed = /`bank_code`: a BIC from the iDEAL bank list \(([^)]*)\)/.exec(doc)?.[1];
    assert.equal(listed, IDEAL_TEST_BANKS.map((b) => `\`${b.bank_code}\``).join(', '));
  });

  test('lookup by name, and which purchases a method applies to', () => {
    const table: Array<[string, string, string, boolean]> = [
      ['pix', 'BRL', 'BR', true],
      ['pix', 'USD', 'BR', false],
      ['pix', 'BRL', 'PT', false],
      ['boleto', 'BRL', 'BR', true],
      ['ideal', 'EUR', 'NL', true],
      ['ideal', 'EUR', 'DE', false],
      ['ideal', 'USD', 'NL', false],
    ];
    for (const [name, currency, country, applies] of table) {
      const m = apmMethod(name);
      assert.ok(m, name);
      assert.equal(appliesTo(m, currency, country), applies, `${name} ${currency} ${country}`);
    }
    assert.equal(apmMethod('sofort'), undefined);
    assert.equal(apmMethod('toString'), undefined, 'no prototype keys');
  });

  test('card brands are the brands the card checks name, apart from every APM name', () => {
    assert.deepEqual(CARD_BRANDS, ['visa', 'mastercard', 'american-express', 'discover', 'jcb']);
    for (const m of APM_METHODS) assert.ok(!CARD_BRANDS.includes(m.payment_method));
  });

  test('the iDEAL bank list: BICs of Dutch banks (and N26), no duplicates', () => {
    const codes = IDEAL_TEST_BANKS.map((b) => b.bank_code);
    assert.equal(new Set(codes).size, codes.length);
    for (const c of ['ABNANL2A', 'ASNBNL21', 'BUNQNL2A', 'INGBNL2A', 'KNABNL2H', 'RABONL2U', 'RBRBNL21', 'SNSBNL2A', 'TRIONL2U', 'FVLBNL22', 'REVOLT21'])
      assert.ok(codes.includes(c), c);
    for (const c of codes) assert.match(c, /^[A-Z]{6}[A-Z0-9]{2}$/, `${c} is an 8-character BIC`);
  });
});

// ---- CPF and CNPJ ------------------------------------------------------------------------

/** The official check digits (Receita Federal), written out here to check the library against. */
function cpfCheckDigits(nine: string): string {
  const digit = (s: string) => {
    const sum = [...s].reduce((acc, c, i) => acc + Number(c) * (s.length + 1 - i), 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = digit(nine);
  return `${d1}${digit(nine + d1)}`;
}
function cnpjCheckDigits(twelve: string): string {
  const digit = (s: string) => {
    const weights = s.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const sum = [...s].reduce((acc, c, i) => acc + (c.charCodeAt(0) - 48) * (weights[i] as number), 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = digit(twelve);
  return `${d1}${digit(twelve + d1)}`;
}

describe('CPF and CNPJ', () => {
  test('a table of documents: with or without the mask, repeated digits refused', () => {
    const table: Array<[string, 'CPF' | 'CNPJ' | null]> = [
      ['529.982.247-25', 'CPF'],
      ['52998224725', 'CPF'],
      ['529.982.247-24', null], // second check digit wrong
      ['529.982.247-35', null], // first check digit wrong
      ['111.111.111-11', null], // repeated digits pass the arithmetic but are no CPF
      ['00000000000', null],
      ['99999999999', null],
      ['5299822472', null], // 10 digits
      ['529982247255', null], // 12 digits
      ['529982247-25', null], // half a mask
      [' 52998224725', null],
      ['529.982.247-2a', null],
      ['11.222.333/0001-81', 'CNPJ'],
      ['11222333000181', 'CNPJ'],
      ['11.222.333/0001-80', null],
      ['11.111.111/1111-11', null],
      ['00000000000000', null],
      ['12ABC34501DE35', 'CNPJ'], // alphanumeric CNPJ (Receita Federal, from July 2026)
      ['12.ABC.345/01DE-35', 'CNPJ'],
      ['12ABC34501DE36', null],
      ['12abc34501de35', null], // letters are capitals
      ['', null],
      ['not a document', null],
    ];
    for (const [text, kind] of table) assert.equal(brazilianDocument(text)?.kind ?? null, kind, JSON.stringify(text));
    assert.deepEqual(brazilianDocument('529.982.247-25'), { kind: 'CPF', value: '52998224725' });
    assert.deepEqual(brazilianDocument('12.ABC.345/01DE-35'), { kind: 'CNPJ', value: '12ABC34501DE35' });
  });

  test('every check digit the official algorithm gives is accepted, and every other one refused', () => {
    const bases = ['123456780', '987654321', '000000001', '314159265', '271828182', '100000000', '529982247', '840021517'];
    for (const nine of bases) {
      const good = nine + cpfCheckDigits(nine);
      assert.equal(brazilianDocument(good)?.kind, 'CPF', good);
      for (let d = 0; d < 100; d++) {
        const other = nine + String(d).padStart(2, '0');
        if (other !== good) assert.equal(brazilianDocument(other), null, other);
      }
    }
    for (const twelve of ['112223330001', '000000000001', '12ABC34501DE', 'ZZZZZZZZZZZZ', '604457220001', 'A1B2C3D4E5F6']) {
      const good = twelve + cnpjCheckDigits(twelve);
      assert.equal(brazilianDocument(good)?.kind, 'CNPJ', good);
      for (let d = 0; d < 100; d++) {
        const other = twelve + String(d).padStart(2, '0');
        if (other !== good) assert.equal(brazilianDocument(other), null, other);
      }
    }
  });

  test('CEP and state', () => {
    for (const [cep, ok] of [
      ['01310-100', true],
      ['01310100', true],
      ['0131-0100', false],
      ['0131010', false],
      ['013101000', false],
      ['00000-000', false],
      ['ABCDE-FGH', false],
    ] as const)
      assert.equal(isBrazilianPostalCode(cep), ok, cep);
    assert.equal(BRAZILIAN_STATES.length, 27);
    assert.ok(BRAZILIAN_STATES.includes('SP') && BRAZILIAN_STATES.includes('DF'));
  });
});

// ---- checkApmFields ----------------------------------------------------------------------

const person = {
  document_number: '529.982.247-25',
  email: 'comprador@example.com.br',
  address_street: 'Avenida Paulista',
  address_number: '1578',
  address_complement: '',
  address_postal_code: '01310-200',
  address_city: 'São Paulo',
  address_state: 'SP',
  address_country: 'BR',
};
const complete: Record<string, Record<string, unknown>> = {
  pix: { payment_method: 'pix', person: { document_number: person.document_number, email: person.email } },
  boleto: { payment_method: 'boleto', person: { ...person, document_number: '11.222.333/0001-81' } },
  ideal: { payment_method: 'ideal', bank_code: 'INGBNL2A' },
};

/** The body with the field at `path` set to `value` (`undefined` removes it). */
function withField(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const parts = path.split('.');
  let here = copy as Record<string, unknown>;
  for (const p of parts.slice(0, -1)) here = here[p] as Record<string, unknown>;
  const last = parts.at(-1) as string;
  if (value === undefined) delete here[last];
  else here[last] = value;
  return copy;
}

/** Wrong values for each required field, and the words of the refusal. */
const WRONG: Record<string, Array<[unknown, RegExp]>> = {
  'person.document_number': [
    ['111.111.111-11', /valid check digits/],
    ['529.982.247-24', /valid check digits/],
    ['11.222.333/0001-80', /valid check digits/],
    [52998224725, /must be a string/],
  ],
  'person.email': [
    ['not-an-address', /e-mail address/],
    ['a@b', /e-mail address/],
  ],
  'person.address_street': [
    ['   ', /must not be blank/],
    ['x'.repeat(256), /at most 255 characters/],
  ],
  'person.address_number': [['1'.repeat(17), /at most 16 characters/]],
  'person.address_postal_code': [['1310-100', /CEP of 8 digits/]],
  'person.address_city': [['x'.repeat(65), /at most 64 characters/]],
  'person.address_state': [
    ['São Paulo', /state abbreviation/],
    ['sp', /state abbreviation/],
    ['XX', /state abbreviation/],
  ],
  'person.address_country': [
    ['PT', /must be "BR"/],
    [['BR'], /must be a string/],
  ],
  bank_code: [
    ['ingbnl2a', /iDEAL bank list: ABNANL2A, /],
    ['DEUTDEFF', /iDEAL bank list/],
  ],
};

describe('checkApmFields', () => {
  test('a complete body of every method passes', () => {
    for (const m of APM_METHODS) assert.equal(fieldsAnswer(m, complete[m.payment_method] as Record<string, unknown>), null, m.payment_method);
    const cnpjPix = withField(complete.pix as Record<string, unknown>, 'person.document_number', '12ABC34501DE35');
    assert.equal(fieldsAnswer(apmMethod('pix')!, cnpjPix), null, 'an alphanumeric CNPJ');
  });

  test('every required field of every method: missing, empty or wrong is a 400 naming it', () => {
    let cases = 0;
    for (const m of APM_METHODS) {
      const body = complete[m.payment_method] as Record<string, unknown>;
      for (const { path } of m.required) {
        for (const gone of [undefined, '', null]) {
          const e = fieldsAnswer(m, withField(body, path, gone));
          assert.ok(e, `${m.payment_method} without ${path}`);
          assert.deepEqual([e.http, e.code, e.field, e.detail], [400, '0400', path, `${path} is required for ${m.payment_method}`]);
          cases++;
        }
        const wrongs = WRONG[path];
        assert.ok(wrongs, `wrong values listed for ${path}`);
        for (const [value, words] of wrongs) {
          const e = fieldsAnswer(m, withField(body, path, value));
          assert.ok(e, `${m.payment_method} ${path}=${JSON.stringify(value)}`);
          assert.equal(e.field, path);
          assert.match(e.detail ?? '', words);
          if (path === 'person.document_number') assert.ok(!(e.message + (e.detail ?? '')).includes(String(value)), 'the document is not repeated');
          cases++;
        }
      }
    }
    assert.ok(cases >= 40, `${cases} cases`);
  });

  test('the first failing field in catalogue order is the one named', () => {
    const boleto = apmMethod('boleto')!;
    const body = withField(withField(complete.boleto as Record<string, unknown>, 'person.address_state', 'XX'), 'person.address_street', undefined);
    assert.equal(fieldsAnswer(boleto, body)?.field, 'person.address_street');
  });

  test('a person that is not an object of fields is named itself; a missing one names its first field', () => {
    const pix = apmMethod('pix')!;
    for (const bad of ['529.982.247-25', 42, ['x'], true]) {
      const e = fieldsAnswer(pix, { person: bad });
      assert.deepEqual([e?.field, e?.detail], ['person', 'person must be an object of fields'], JSON.stringify(bad));
    }
    assert.equal(fieldsAnswer(pix, {})?.field, 'person.document_number');
    assert.equal(fieldsAnswer(pix, { person: '' })?.field, 'person.document_number', 'an empty XML element reads as no person');
    assert.equal(fieldsAnswer(pix, { person: Object.create({ document_number: '52998224725' }) })?.field, 'person.document_number', 'own fields only');
  });
});
