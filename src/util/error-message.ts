// One way to turn whatever was thrown into the text of a log line or a status message.
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
