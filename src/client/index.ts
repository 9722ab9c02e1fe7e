// `tollgate/client`: the merchant client library (README.md beside this file).
// It imports nothing of the server but the signature code in src/crypto/signature.ts.
export { type CallOptions, type CallResult, ENDPOINTS, type EndpointName, type Endpoints, TollgateClient, type TollgateClientOptions } from './client.js';
export {
  AuthenticationError,
  ConflictError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  SignatureVerificationError,
  TollgateApiError,
  TollgateError,
  UnexpectedAnswerError,
  type WebhookProblem,
  WebhookVerificationError,
} from './errors.js';
export { DEFAULT_WEBHOOK_TOLERANCE_S, type HeadersLike, type NotificationKeys, verifyNotification } from './notifications.js';
export { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type FetchLike, type RetryOptions } from './transport.js';
export type * from './types.js';
export {
  AnswerFormatError,
  type BodyFormat,
  canonicalString,
  encodeBody,
  parseAnswer,
  parseXmlAnswer,
  resultCode,
  riskReasons,
  sign,
  signBody,
  verifySignature,
} from './wire.js';
