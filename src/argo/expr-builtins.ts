// expr's plain builtins (builtin/lib.go) and Argo's functions (utils/evaluate/evaluate.go), on Go values:
// what each accepts, what it gives back (ceil(1) is a float64, max(1, 2.5) the float), where it panics.

import {
  GoPanic, compare, floatToInt, formatV, negate, parseGoFloat, parseGoInt, typeName,
  type Val,
} from './expr-values.js';

const panic = (message: string): never => {
  throw new GoPanic(message);
};

const isNum = (v: Val): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';

/** goRound is math.Round: half away from zero, keeping the sign of zero. */
function goRound(x: number): number {
  const t = Math.trunc(x);
  return Math.abs(x - t) >= 0.5 ? t + Math.sign(x) : t;
}

/** argoFunction is one of Argo's functions in the environment, as evaluate.go defines them: isNil and
 * default look at the whole result, not at their argument. */
export function argoFunction(name: string, args: Val[], result: Val): Val {
  const [x = null, d = null] = args;
  switch (name) {
    case 'isNaN':
    case 'isInf':
      if (typeof x !== 'number') return panic(`interface conversion: interface {} is ${typeName(x)}, not float64`);
      return name === 'isNaN' ? Number.isNaN(x) : x === Infinity || x === -Infinity;
    case 'asInt':
      if (typeof x === 'number') return floatToInt(x);
      if (typeof x === 'bigint') return x;
      if (typeof x === 'string') return parseGoInt(x) ?? panic(`strconv.ParseInt: parsing ${JSON.stringify(x)}: invalid syntax`);
      return panic(`asInt() not supported on ${typeName(x)} ${formatV(x)}`);
    case 'asFloat':
      if (typeof x === 'number') return x;
      if (typeof x === 'bigint') return Number(x);
      if (typeof x === 'string') return parseGoFloat(x) ?? panic(`strconv.ParseFloat: parsing ${JSON.stringify(x)}: invalid syntax`);
      return panic(`asFloat() not supported on ${typeName(x)} ${formatV(x)}`);
    case 'isNil':
      return result === null;
    case 'default':
      return result === null ? d : result;
  }
  return panic(`unknown function ${name}`);
}

/** builtinValue is one of expr's plain builtins applied to its arguments. */
export function builtinValue(name: string, vals: Val[]): Val {
  const x = vals[0] as Val;
  switch (name) {
    case 'len':
      if (Array.isArray(x)) return BigInt(x.length);
      if (x instanceof Map) return BigInt(x.size);
      if (typeof x === 'string') return BigInt(Array.from(x).length);
      return panic(`invalid argument for len (type ${typeName(x)})`);
    case 'abs':
      if (typeof x === 'bigint') return x < 0n ? negate(x) : x;
      if (typeof x === 'number') return x < 0 ? -x : x;
      return panic(`invalid argument for abs (type ${typeName(x)})`);
    case 'ceil':
    case 'floor':
    case 'round':
      if (typeof x === 'bigint') return Number(x);
      if (typeof x === 'number') return name === 'ceil' ? Math.ceil(x) : name === 'floor' ? Math.floor(x) : goRound(x);
      return panic(`invalid argument for ${name} (type ${typeName(x)})`);
    case 'int':
      if (typeof x === 'number') return floatToInt(x);
      if (typeof x === 'bigint') return x;
      if (typeof x === 'string') return parseGoInt(x) ?? panic(`invalid operation: int(${x})`);
      return panic(`invalid operation: int(${typeName(x)})`);
    case 'float':
      if (typeof x === 'number') return x;
      if (typeof x === 'bigint') return Number(x);
      if (typeof x === 'string') return parseGoFloat(x) ?? panic(`invalid operation: float(${x})`);
      return panic(`invalid operation: float(${typeName(x)})`);
    case 'string':
      return formatV(x);
    case 'max':
    case 'min':
      return minMax(name, vals);
    case 'mean': {
      const [count, total] = meanOf(vals);
      return count === 0 ? 0 : total / count;
    }
    case 'median': {
      const values = medianOf(vals).sort((a, b) => (Number.isNaN(a) ? (Number.isNaN(b) ? 0 : -1) : Number.isNaN(b) ? 1 : a - b));
      const n = values.length;
      if (n === 0) return 0;
      return n % 2 === 1 ? (values[(n - 1) / 2] as number) : ((values[n / 2 - 1] as number) + (values[n / 2] as number)) / 2;
    }
  }
  return panic(`unknown builtin ${name}`);
}

/** minMax is expr's minMax: numbers and arrays of them, flattened; a lone non-number comes back as it is. */
function minMax(name: string, args: Val[]): Val {
  let val: Val = null;
  const better = (v: Val, e: Val): boolean => compare(name === 'max' ? '<' : '>', v, e);
  for (const arg of args) {
    if (Array.isArray(arg)) {
      for (const e of arg) {
        const ev = minMax(name, [e]);
        if (!isNum(ev)) return panic(`invalid argument for ${name} (type ${typeName(ev)})`);
        if (val === null || better(val, ev)) val = ev;
      }
    } else if (isNum(arg)) {
      if (val === null || better(val, arg)) val = arg;
    } else if (args.length === 1) {
      return arg;
    } else {
      return panic(`invalid argument for ${name} (type ${typeName(arg)})`);
    }
  }
  return val;
}

/** meanOf is expr's mean(): the count and the sum, nested arrays summed on their own first. */
function meanOf(args: Val[]): [number, number] {
  let total = 0;
  let count = 0;
  for (const arg of args) {
    if (Array.isArray(arg)) {
      for (const e of arg) {
        const [c, s] = meanOf([e]);
        total += s;
        count += c;
      }
    } else if (isNum(arg)) {
      total += Number(arg);
      count++;
    } else return panic(`invalid argument for mean (type ${typeName(arg)})`);
  }
  return [count, total];
}

function medianOf(args: Val[]): number[] {
  const values: number[] = [];
  for (const arg of args) {
    if (Array.isArray(arg)) for (const e of arg) values.push(...medianOf([e]));
    else if (isNum(arg)) values.push(Number(arg));
    else return panic(`invalid argument for median (type ${typeName(arg)})`);
  }
  return values;
}
