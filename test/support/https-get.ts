// HTTPS requests to the kubelet API as a test client: with or without a client certificate or a
// bearer token, the serving certificate not verified (the kubelet's self-signed one).
import { request } from 'node:https';

export interface HttpsAnswer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface Credentials {
  cert?: string;
  key?: string;
  token?: string;
  ca?: string;
}

export function httpsGet(url: string, creds: Credentials = {}, method = 'GET'): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        cert: creds.cert,
        key: creds.key,
        ca: creds.ca,
        rejectUnauthorized: creds.ca !== undefined,
        agent: false,
        headers: creds.token ? { Authorization: `Bearer ${creds.token}` } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}
