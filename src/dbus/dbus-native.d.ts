// Types for the two wire-level modules of @homebridge/dbus-native that dbus-connection.ts uses.
declare module '@homebridge/dbus-native/lib/handshake.js' {
  import type { Socket } from 'node:net';
  /** Writes the NUL byte and runs the SASL exchange; the callback gets the server GUID. */
  export default function handshake(
    stream: Socket,
    opts: { authMethods: string[] },
    cb: (err: Error | null, guid?: string) => void,
  ): void;
}

declare module '@homebridge/dbus-native/lib/message.js' {
  import type { Socket } from 'node:net';
  /** A D-Bus message: header fields by name, body values in the order of `signature`. */
  export interface DbusMessage {
    type: number;
    serial?: number;
    replySerial?: number;
    errorName?: string;
    member?: string;
    signature?: string;
    body?: unknown[];
    [field: string]: unknown;
  }
  export function marshall(msg: DbusMessage): Buffer;
  export function unmarshalMessages(stream: Socket, onMessage: (m: DbusMessage) => void, opts: object): void;
}
