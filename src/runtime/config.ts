// One config schema per process: each setting has a flag, an env twin (PHASED_ROLLOUT_<FLAG>), a default
// and a doc line. It is validated once at start-up into a frozen object; `--help` is generated from it.
// Core code never reads process.env: main.ts passes argv and env in.

/** SettingKind is how a setting's text is turned into a value. */
export type SettingKind = 'string' | 'port' | 'int' | 'duration' | 'bool' | 'list' | 'level';

/** Setting describes one flag of a process. */
export interface Setting {
  kind: SettingKind;
  doc: string;
  /** Default as text (parsed like user input); absent means no default. */
  default?: string;
  required?: boolean;
  /** A duration that may be 0 (its doc says what 0 means). */
  zero?: boolean;
}

/** Schema maps flag names (kebab-case, without `--`) to their settings. */
export type Schema = Record<string, Setting>;

/** Values is the parsed config: strings, numbers (ports; durations in ms), booleans or string lists. */
export type Values<S extends Schema> = {
  readonly [K in keyof S]: S[K]['kind'] extends 'port' | 'int' | 'duration'
    ? number
    : S[K]['kind'] extends 'bool'
      ? boolean
      : S[K]['kind'] extends 'list'
        ? readonly string[]
        : S[K]['required'] extends true
          ? string
          : S[K]['default'] extends string
            ? string
            : string | undefined;
};

/** ConfigError lists every bad or missing setting at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** LOG_LEVELS are the levels `--log-level` accepts (pino's). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/** envName is the env twin of a flag: `tls-cert-file` -> `PHASED_ROLLOUT_TLS_CERT_FILE`. */
export function envName(flag: string): string {
  return `PHASED_ROLLOUT_${flag.toUpperCase().replace(/-/g, '_')}`;
}

/** parseDuration reads `500ms`, `10s`, `2m`, `1h` or a bare number of seconds into milliseconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000;
  return Math.round(Number(m[1]) * unit);
}

function convert(kind: SettingKind, raw: string[], zero = false): { value: unknown } | { error: string } {
  const last = raw[raw.length - 1] ?? '';
  switch (kind) {
    case 'string':
      return last === '' ? { error: 'must not be empty' } : { value: last };
    case 'port': {
      const n = /^\d+$/.test(last) ? Number(last) : NaN;
      return Number.isInteger(n) && n >= 0 && n <= 65535 ? { value: n } : { error: 'must be a port number 0..65535' };
    }
    case 'int': {
      const n = /^\d{1,6}$/.test(last) ? Number(last) : NaN;
      return n >= 1 ? { value: n } : { error: 'must be a positive integer' };
    }
    case 'duration': {
      const ms = parseDuration(last);
      if (zero && ms === 0) return { value: 0 };
      return ms !== undefined && ms > 0 ? { value: ms } : { error: `must be a positive duration such as 500ms, 10s or 2m${zero ? ', or 0s' : ''}` };
    }
    case 'bool':
      if (last === '' || last === 'true') return { value: true };
      if (last === 'false') return { value: false };
      return { error: 'must be true or false' };
    case 'list':
      return { value: raw.flatMap((r) => r.split(',')).map((s) => s.trim()).filter((s) => s !== '') };
    case 'level':
      return LOG_LEVELS.includes(last) ? { value: last } : { error: `must be one of ${LOG_LEVELS.join(', ')}` };
  }
}

/** ParsedArgs is what `loadConfig` returns: the values, or a request for help. */
export type ParsedArgs<S extends Schema> = { help: true } | { help: false; values: Values<S> };

/**
 * loadConfig reads flags (`--name value`, `--name=value`, bare `--flag` for booleans; list flags may
 * repeat), then env twins, then defaults. Flags win over env. Throws ConfigError listing every problem.
 */
export function loadConfig<S extends Schema>(schema: S, argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedArgs<S> {
  const fromFlags = new Map<string, string[]>();
  const problems: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--help' || arg === '-h') return { help: true };
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/s.exec(arg);
    const setting = m ? schema[m[1] ?? ''] : undefined;
    if (!m || !setting) {
      problems.push(`unknown argument ${JSON.stringify(arg)} (see --help)`);
      continue;
    }
    let value = m[2];
    if (value === undefined) {
      const next = argv[i + 1];
      if (setting.kind === 'bool' && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) {
        problems.push(`--${m[1]} needs a value`);
        continue;
      } else value = argv[++i];
    }
    const list = fromFlags.get(m[1] ?? '') ?? [];
    list.push(value ?? '');
    fromFlags.set(m[1] ?? '', list);
  }
  const values: Record<string, unknown> = {};
  for (const [flag, setting] of Object.entries(schema)) {
    const envValue = env[envName(flag)];
    const raw = fromFlags.get(flag) ?? (envValue !== undefined ? [envValue] : setting.default !== undefined ? [setting.default] : undefined);
    if (raw === undefined) {
      if (setting.required) problems.push(`--${flag} (or ${envName(flag)}) is required`);
      else if (setting.kind === 'list') values[flag] = [];
      else if (setting.kind === 'bool') values[flag] = false;
      continue;
    }
    const r = convert(setting.kind, raw, setting.zero === true);
    if ('error' in r) problems.push(`--${flag}: ${JSON.stringify(raw[raw.length - 1])} ${r.error}`);
    else values[flag] = r.value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return { help: false, values: Object.freeze(values) as Values<S> };
}

/** helpText renders the usage of a process from its schema. */
export function helpText(program: string, summary: string, schema: Schema): string {
  const lines = [`Usage: ${program} [flags]`, '', summary, '', 'Flags (each also settable by the environment variable shown):'];
  for (const [flag, s] of Object.entries(schema)) {
    const dflt = s.default !== undefined ? ` (default ${JSON.stringify(s.default)})` : s.required ? ' (required)' : '';
    lines.push(`  --${flag}${s.kind === 'bool' ? '' : ' ' + s.kind.toUpperCase()}`, `      ${s.doc}${dflt}`, `      env ${envName(flag)}`);
  }
  return lines.join('\n') + '\n';
}
