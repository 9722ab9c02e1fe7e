// The movements a report has named so far, in bounded memory: a million keys as strings in a
// Set take about 100 MB, as 64-bit hashes in one open-addressed table 16 MB. Two different keys
// share a hash with a probability near n²/2⁶⁵ (3·10⁻⁸ for a million), so a hit is taken for the
// key itself; that is the price of the 256 MiB bound (issue 35 item 3).

/** Two 32-bit halves of a 64-bit hash of `s` (cyrb53's two lanes, kept apart instead of folded to 53 bits). */
export function hash64(s: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

/** A set of strings kept as their 64-bit hashes (linear probing; grows at half full). */
export class KeySet {
  private slots = new Uint32Array(2 * 1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `key`; false when it was there already. */
  add(key: string): boolean {
    const [a, b] = hash64(key);
    if (this.find(a, b) >= 0) return false;
    if ((this.count + 1) * 2 > this.slots.length / 2) this.grow();
    this.put(a, b);
    this.count++;
    return true;
  }

  has(key: string): boolean {
    const [a, b] = hash64(key);
    return this.find(a, b) >= 0;
  }

  // An empty slot is (0, 0); a hash of (0, 0) is stored as (0, 1): one more near-impossible collision.
  private find(a: number, b0: number): number {
    const b = a === 0 && b0 === 0 ? 1 : b0;
    const mask = this.slots.length / 2 - 1;
    for (let i = a & mask; ; i = (i + 1) & mask) {
      const x = this.slots[2 * i] as number;
      const y = this.slots[2 * i + 1] as number;
      if (x === 0 && y === 0) return -1;
      if (x === a && y === b) return i;
    }
  }

  private put(a: number, b0: number): void {
    const b = a === 0 && b0 === 0 ? 1 : b0;
    const mask = this.slots.length / 2 - 1;
    let i = a & mask;
    while (this.slots[2 * i] !== 0 || this.slots[2 * i + 1] !== 0) i = (i + 1) & mask;
    this.slots[2 * i] = a;
    this.slots[2 * i + 1] = b;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) {
      const a = old[i] as number;
      const b = old[i + 1] as number;
      if (a !== 0 || b !== 0) this.put(a, b);
    }
  }
}

/** A growing list of numbers in one typed array (the times of the movements found, for the range check). */
export class NumberList {
  private data = new Float64Array(1024);
  length = 0;

  push(x: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = x;
  }

  /** How many lie in [from, to]. */
  countWithin(from: number, to: number): number {
    let n = 0;
    for (let i = 0; i < this.length; i++) {
      const x = this.data[i] as number;
      if (x >= from && x <= to) n++;
    }
    return n;
  }
}
