import { isIP } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Agent, fetch, type Response } from 'undici';
import { bareHost, guardedLookup, parseWebhookUrl, WebhookUrlRefused, whyNotPublic } from './webhook-url-guard';

/** One attempt to send: where, signed with what, and the exact bytes. */
export interface WebhookRequest {
  url: string;
  secret: string;
  /** The event id: `webhook-id`, the same on every attempt, on which receivers dedupe. */
  eventId: string;
  /** The event JSON, the same bytes the change feed serves. */
  body: string;
}

export interface AttemptOutcome {
  succeeded: boolean;
  /** The receiver's HTTP status, when it answered at all. */
  responseStatus: number | null;
  /** Why the attempt failed, briefly; null on success. */
  error: string | null;
}

/** Thrown (as the abort reason) when the worker stops while the attempt is in flight. */
export class AttemptReleased extends Error {}

/** How much of a receiver's answer is read (and thrown away) before the connection is let go. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'task-planning-service-webhooks/1';

/**
 * One attempt as Standard Webhooks describes it (`standardwebhooks` signs it); `webhook-timestamp`
 * is this attempt's, so a late retry passes a receiver's tolerance. Only a 2xx succeeds: redirects
 * are never followed. undici's fetch, for an Agent of ours that keeps connections and guards lookups.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly signers = new Map<string, StandardWebhook>();

  constructor(private readonly options: { timeoutMs: number; allowPrivateUrls: boolean }) {
    this.agent = new Agent({
      connections: 16,
      keepAliveTimeout: 4_000,
      ...(options.allowPrivateUrls ? {} : { connect: { lookup: guardedLookup } }),
    });
  }

  /** `stop` aborts the attempt with AttemptReleased (the worker is shutting down): that rejects instead of answering an outcome. */
  async send(request: WebhookRequest, stop: AbortSignal): Promise<AttemptOutcome> {
    try {
      const url = parseWebhookUrl(request.url, this.options.allowPrivateUrls);
      const host = bareHost(url);
      // A host written as an address never reaches the lookup: it is checked here.
      if (!this.options.allowPrivateUrls && isIP(host) && whyNotPublic(host)) {
        throw new WebhookUrlRefused(`${host} is not a public address (${whyNotPublic(host)})`);
      }
      const sentAt = new Date();
      const response = await fetch(url, {
        method: 'POST',
        body: request.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': request.eventId,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': this.signer(request.secret).sign(request.eventId, sentAt, request.body),
        },
        redirect: 'manual',
        signal: AbortSignal.any([stop, AbortSignal.timeout(this.options.timeoutMs)]),
        dispatcher: this.agent,
      });
      await discardBody(response);
      if (response.status >= 200 && response.status < 300) return { succeeded: true, responseStatus: response.status, error: null };
      const error =
        response.status >= 300 && response.status < 400
          ? `answered ${response.status}, a redirect${response.headers.get('location') ? ` to ${response.headers.get('location')}` : ''}; redirects are not followed`
          : `answered ${response.status}, not 2xx`;
      return { succeeded: false, responseStatus: response.status, error: error.slice(0, 500) };
    } catch (error) {
      if (stop.aborted) throw new AttemptReleased('The worker stopped during the attempt');
      return { succeeded: false, responseStatus: null, error: this.reason(error).slice(0, 500) };
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }

  /** One signer per secret: it decodes the secret once. */
  private signer(secret: string): StandardWebhook {
    let signer = this.signers.get(secret);
    if (!signer) {
      if (this.signers.size > 1000) this.signers.clear();
      signer = new StandardWebhook(secret);
      this.signers.set(secret, signer);
    }
    return signer;
  }

  /** A short reason for a request that got no answer. (Duck-typed: errors of Node's own realm are not this realm's Error.) */
  private reason(error: unknown): string {
    const outer = error as { name?: unknown; message?: unknown; cause?: unknown } | null;
    const inner = (outer?.cause ?? outer) as { name?: unknown; message?: unknown; code?: unknown } | null;
    if (outer instanceof WebhookUrlRefused || inner instanceof WebhookUrlRefused) return `refused: ${(inner as Error).message}`;
    if ([outer?.name, inner?.name].some((name) => name === 'TimeoutError' || name === 'AbortError')) {
      return `no answer within ${this.options.timeoutMs} ms`;
    }
    const code = typeof inner?.code === 'string' ? inner.code : '';
    if (CONNECTION_ERRORS[code]) return `${CONNECTION_ERRORS[code]} (${code})`;
    if (code.startsWith('ERR_TLS') || code.includes('CERT')) return `TLS failed (${code})`;
    return `request failed: ${String(inner?.message ?? outer?.message ?? 'unknown error')}`;
  }
}

const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host does not resolve',
  EAI_AGAIN: 'host could not be resolved (temporary failure)',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the receiver',
};

/** Reads a little of the answer (so the connection can be kept alive) and drops the rest. */
async function discardBody(response: Response): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  let read = 0;
  try {
    while (read <= MAX_RESPONSE_BYTES) {
      const chunk = await reader.read();
      if (chunk.done) return;
      read += chunk.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The status decided the outcome; a broken body afterwards does not change it.
  }
}
