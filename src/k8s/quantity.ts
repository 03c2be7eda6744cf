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

const DECIMAL_SUFFIX_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const QUANTITY_RE = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

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
  ) {}

  static parse(text: string): Quantity {
    const m = QUANTITY_RE.exec(text.trim());
    if (!m) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`);
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
    return new Quantity(num, den, text);
  }

  static zero(): Quantity {
    return new Quantity(0n, 1n, '0');
  }

  plus(o: Quantity): Quantity {
    return new Quantity(this.num * o.den + o.num * this.den, this.den * o.den, `${this.text}+${o.text}`);
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

  toNumber(): number {
    return Number(this.num) / Number(this.den);
  }
}

/** Parses a quantity as found in a Pod spec; a number (YAML `cpu: 2`) is taken as its decimal text. */
export function parseQuantity(q: string | number): Quantity {
  return Quantity.parse(typeof q === 'number' ? String(q) : q);
}
