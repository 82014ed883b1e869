import type { S3Client } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { StorageConfig } from '../config/schema.js';
import type { ByteRange, ObjectStorage } from './storage.js';

type S3Settings = NonNullable<StorageConfig['s3']>;

/** Part size of multipart uploads, and how many parts are in flight: at most 2 × 8 MiB buffered per copy. */
const PART_BYTES = 8 * 1024 * 1024;
const QUEUE = 2;

/** The AWS SDK (about 25 MB of memory once loaded), loaded only by a gateway that archives to S3. */
type Sdk = [typeof import('@aws-sdk/client-s3'), typeof import('@aws-sdk/lib-storage')];
let sdk: Promise<Sdk> | null = null;
const loadSdk = () => (sdk ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]));

/**
 * Videos in any S3-compatible bucket. Uploads go through lib-storage's Upload (multipart for
 * anything past one part), fed from the provider's response stream; reads ask for the range the
 * client asked for.
 */
export class S3Storage implements ObjectStorage {
  private readonly client: Promise<{ client: S3Client; sdk: Sdk }>;

  constructor(private readonly s: S3Settings) {
    this.client = loadSdk().then((loaded) => ({ sdk: loaded, client: this.connect(loaded[0].S3Client) }));
    // A failed load surfaces in the first put/read/remove; never as an unhandled rejection.
    this.client.catch(() => {});
  }

  private connect(Client: typeof S3Client): S3Client {
    const s = this.s;
    return new Client({
      region: s.region,
      endpoint: s.endpoint,
      forcePathStyle: s.force_path_style,
      credentials: s.access_key_id && s.secret_access_key ? { accessKeyId: s.access_key_id, secretAccessKey: s.secret_access_key } : undefined,
      // Only what is needed: no checksum trailer on every request (several S3-compatible servers refuse it).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: Readable, contentType: string): Promise<number> {
    const { client, sdk: [, { Upload }] } = await this.client;
    let bytes = 0;
    body.on('data', (chunk: Buffer) => (bytes += chunk.length));
    const upload = new Upload({ client, params: { Bucket: this.s.bucket, Key: this.s.prefix + key, Body: body, ContentType: contentType }, partSize: PART_BYTES, queueSize: QUEUE, leavePartsOnError: false });
    await upload.done();
    return bytes;
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const { client, sdk: [{ GetObjectCommand }] } = await this.client;
    const out = await client.send(new GetObjectCommand({ Bucket: this.s.bucket, Key: this.s.prefix + key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }));
    return out.Body as Readable;
  }

  async remove(key: string): Promise<void> {
    const { client, sdk: [{ DeleteObjectCommand }] } = await this.client;
    await client.send(new DeleteObjectCommand({ Bucket: this.s.bucket, Key: this.s.prefix + key }));
  }
}
