// Forms with files in the portal (a dispute's evidence; docs/contract.md §19, §22). A browser sends
// a file only as `multipart/form-data`; the portal's other forms are urlencoded. The parser
// here takes multipart only on routes that declare `upload` (their body limit) and reads it
// with the Fetch API's own `Response.formData()` (undici, part of Node since 18): no parser of
// our own and no dependency. The text fields become the body (checked by the route's schema and
// the CSRF hook as any form's); the files go to `request.portalFiles`, never into the body, so
// a schema, the form-token fingerprint and the audit line never hold a file's bytes.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BodyParseError } from '../web/body.js';

/** A file of the form, as sent: the field it came in, its name, its bytes. */
export interface UploadedFile {
  field: string;
  file_name: string;
  bytes: Buffer;
}

/** Parts a form may have at most (text fields and files together). */
export const MULTIPART_PARTS = 50;
/** A file name is kept to this many characters. */
export const FILE_NAME_MAX = 255;

declare module 'fastify' {
  interface FastifyRequest {
    /** The files of a multipart form (routes with `upload` only); empty file inputs are left out. */
    portalFiles?: UploadedFile[];
  }
  interface FastifyContextConfig {
    /** The route takes multipart/form-data (a portal route's `upload`). */
    portalUpload?: boolean;
  }
}

class NotAcceptedHere extends Error {
  readonly statusCode = 415;
}

/** Registers the multipart parser on the portal's scope (the app's own parser takes every other media type). */
export function registerMultipart(scope: FastifyInstance): void {
  scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    parseMultipart(request, body as Buffer).then(
      (value) => done(null, value),
      (e: Error) => done(e, undefined),
    );
  });
}

async function parseMultipart(request: FastifyRequest, body: Buffer): Promise<Record<string, string>> {
  if (!request.routeOptions.config?.portalUpload)
    throw new NotAcceptedHere('This form takes no files: send it as the page does (application/x-www-form-urlencoded).');
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': String(request.headers['content-type'] ?? '') } }).formData();
  } catch {
    throw new BodyParseError('the form (multipart/form-data) could not be read');
  }
  // No prototype: a field named `__proto__` is a field like any other.
  const fields: Record<string, string> = Object.create(null);
  const files: UploadedFile[] = [];
  let parts = 0;
  for (const [name, value] of form.entries()) {
    if (++parts > MULTIPART_PARTS) throw new BodyParseError(`the form has more than ${MULTIPART_PARTS} fields`);
    if (name.includes('\u0000')) throw new BodyParseError('a field name holds a NUL character');
    if (typeof value === 'string') {
      if (value.includes('\u0000')) throw new BodyParseError(`${name} holds a NUL character, which no field accepts`);
      if (Object.hasOwn(fields, name)) throw new BodyParseError(`${name} is given twice`);
      fields[name] = value;
      continue;
    }
    // A file input left empty is still sent, with no name and no bytes.
    if (value.name === '' && value.size === 0) continue;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: a file's name is shown and audited without these
    const file_name = value.name.replace(/[\u0000-\u001F\u007F]/g, '').slice(0, FILE_NAME_MAX);
    files.push({ field: name, file_name, bytes: Buffer.from(await value.arrayBuffer()) });
  }
  request.portalFiles = files;
  request.bodyFormat = 'form';
  return fields;
}
