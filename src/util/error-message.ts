// The text of anything thrown, for a log field or an error message: an Error's message, else the
// value as a string (a rejected promise may carry anything).

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
