import S3rver from 's3rver';
import { tempDir } from './gateway.js';

/** A real S3-compatible server (s3rver) on a loopback port 0 with one bucket, in a temp folder. */
export async function startS3(bucket = 'videos'): Promise<{ endpoint: string; bucket: string; dir: string; close(): Promise<void> }> {
  const dir = tempDir('mediagate-s3-');
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir.path, configureBuckets: [{ name: bucket, configs: [] }] });
  const address = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    dir: dir.path,
    async close() {
      await server.close();
      dir.remove();
    },
  };
}

/** storage settings for the gateway against that server (s3rver takes its fixed S3RVER credentials). */
export function s3Storage(s3: { endpoint: string; bucket: string }, extra: Record<string, unknown> = {}) {
  return { type: 's3', s3: { endpoint: s3.endpoint, bucket: s3.bucket, region: 'us-east-1', access_key_id: 'S3RVER', secret_access_key: 'S3RVER', prefix: 'archive/' }, ...extra };
}
