// Kubernetes resource quantities ('100m', '1Gi', '1e3', '500M', '0.5'), held as an exact
// fraction so that rounding matches the API's (Value and MilliValue round up) without float
// surprises such as 0.1 * 1000 = 100.00000000000001.

const BINARY_SUFFIX: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};

const DECIMAL_SUFFIX_EXP: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** How a quantity was written, which decides how Go prints it back (resource.Format). */
export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

const DECIMAL_SI_SUFFIX: Record<number, string> = {
  [-9]: 'n',
  [-6]: 'u',
  [-3]: 'm',
  0: '',
  3: 'k',
  6: 'M',
  9: 'G',
  12: 'T',
  15: 'P',
  18: 'E',
};
const BINARY_SI_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

function ceilDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d !== 0n && n > 0n === d > 0n ? q + 1n : q;
}

export class Quantity {
  /** value = num / den, den > 0 */
  private constructor(
    readonly num: bigint,
    readonly den: bigint,
    /** The text it was parsed from. */
    readonly text: string,
    readonly format: QuantityFormat = 'DecimalSI',
  ) {}

  static parse(text: string): Quantity {
    const m = QUANTITY_RE.exec(text.trim());
    if (!m)
      throw new Error(
        `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`,
      );
    const [, sign, digits, suffix = ''] = m;
    const [intPart, fracPart = ''] = digits!.split('.');
    let num = BigInt((intPart || '0') + fracPart);
    let den = 10n ** BigInt(fracPart.length);
    const binary = BINARY_SUFFIX[suffix];
    let exp = 0;
    if (binary !== undefined) num *= binary;
    else if (suffix in DECIMAL_SUFFIX_EXP) exp = DECIMAL_SUFFIX_EXP[suffix]!;
    else exp = Number.parseInt(suffix.slice(1), 10);
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
    if (sign === '-') num = -num;
    const format: QuantityFormat =
      binary !== undefined ? 'BinarySI' : /^[eE]/.test(suffix) ? 'DecimalExponent' : 'DecimalSI';
    return new Quantity(num, den, text, format);
  }

  static zero(): Quantity {
    return new Quantity(0n, 1n, '0');
  }

  plus(o: Quantity): Quantity {
    return new Quantity(this.num * o.den + o.num * this.den, this.den * o.den, `${this.text}+${o.text}`, this.format);
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than o. */
  cmp(o: Quantity): number {
    const a = this.num * o.den;
    const b = o.num * this.den;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  isZero(): boolean {
    return this.num === 0n;
  }

  /** Whole units, rounded up (Quantity.Value()): bytes for memory, cores for cpu. */
  value(): number {
    return Number(ceilDiv(this.num, this.den));
  }

  /** Thousandths, rounded up (Quantity.MilliValue()): millicores for cpu. */
  milliValue(): number {
    return Number(ceilDiv(this.num * 1000n, this.den));
  }

  /**
   * The text Go's Quantity.String() gives (what the API server's messages show): binary suffixes
   * for a whole number of at least 1024 written with one, else the mantissa with the largest
   * decimal suffix (or exponent) that keeps it whole; `1.5Gi` is `1536Mi`, `0.5` is `500m`,
   * `1000` is `1k`. Below a nano it rounds away from zero, as the parser does.
   */
  canonical(): string {
    if (this.num === 0n) return '0';
    const small = (this.num < 0n ? -this.num : this.num) < 1024n * this.den;
    if (this.format === 'BinarySI' && !small && this.num % this.den === 0n) {
      let v = this.num / this.den;
      const negative = v < 0n;
      if (negative) v = -v;
      let e = 0;
      while (v >= 1024n && v % 1024n === 0n && e < BINARY_SI_SUFFIX.length - 1) {
        v /= 1024n;
        e++;
      }
      return `${negative ? '-' : ''}${v}${BINARY_SI_SUFFIX[e]}`;
    }
    const scaled = this.num * 10n ** 9n;
    let m = scaled / this.den;
    if (scaled % this.den !== 0n) m += scaled < 0n ? -1n : 1n;
    let e = -9;
    while (m % 10n === 0n) {
      m /= 10n;
      e++;
    }
    const down = ((e % 3) + 3) % 3;
    m *= 10n ** BigInt(down);
    e -= down;
    if (this.format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`;
    if (e > 18) {
      m *= 10n ** BigInt(e - 18);
      e = 18;
    }
    return `${m}${DECIMAL_SI_SUFFIX[e]}`;
  }

  toNumber(): number {
    return Number(this.num) / Number(this.den);
  }
}

/** Parses a quantity as found in a Pod spec; a number (YAML `cpu: 2`) is taken as its decimal text. */
export function parseQuantity(q: string | number): Quantity {
  return Quantity.parse(typeof q === 'number' ? String(q) : q);
}
