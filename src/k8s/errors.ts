// client-node 2.x errors carry the HTTP code and the raw Status body inside a long message; logs and
// status messages want just "403: leases ... is forbidden".

/** apiErrorCode returns the HTTP code of a client-node ApiException, if any. */
export function apiErrorCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

/** apiErrorMessage returns a short, one-line description of an API error. */
export function apiErrorMessage(err: unknown): string {
  const code = apiErrorCode(err);
  const body = (err as { body?: unknown })?.body;
  let message: string | undefined;
  if (typeof body === 'string') {
    try {
      message = (JSON.parse(body) as { message?: string }).message;
    } catch {
      message = body.slice(0, 300);
    }
  } else if (body && typeof body === 'object') message = (body as { message?: string }).message;
  message ??= (err as Error)?.message?.split('\n')[0] ?? String(err);
  return code ? `${code}: ${message}` : message;
}
