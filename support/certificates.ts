/**
 * A throwaway certificate authority and one server certificate for 127.0.0.1, made at run time with
 * the `openssl` command (node:crypto makes keys but not X.509 certificates). RSA 2048, as the
 * certificates of DynamoDB's and Cognito's endpoints are, so a handshake costs what theirs does.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface LoopbackCertificates {
  /** The CA's certificate file: what NODE_EXTRA_CA_CERTS names in a process that trusts it. */
  caPath: string;
  key: Buffer;
  cert: Buffer;
  /** Removes the folder, keys included. */
  remove(): Promise<void>;
}

export async function createLoopbackCertificates(): Promise<LoopbackCertificates> {
  const folder = await mkdtemp(join(tmpdir(), "plant-store-tls-"));
  const file = (name: string) => join(folder, name);
  const openssl = async (args: string[]) => {
    try {
      await run("openssl", args, { cwd: folder });
    } catch (error) {
      const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
      throw new Error(`openssl ${args[0]} failed (is openssl installed?): ${reason}`);
    }
  };
  try {
    await openssl([
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-sha256"],
      ...["-keyout", file("ca.key"), "-out", file("ca.pem"), "-subj", "/CN=Plant Store loopback CA"],
      ...["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
    ]);
    await openssl([
      ...["req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-subj", "/CN=127.0.0.1"],
      ...["-keyout", file("server.key"), "-out", file("server.csr")],
    ]);
    await writeFile(
      file("server.ext"),
      "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
    );
    await openssl([
      ...["x509", "-req", "-in", file("server.csr"), "-days", "1", "-sha256"],
      ...["-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial"],
      ...["-extfile", file("server.ext"), "-out", file("server.pem")],
    ]);
    return {
      caPath: file("ca.pem"),
      key: await readFile(file("server.key")),
      cert: await readFile(file("server.pem")),
      remove: () => rm(folder, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
