// `{state}.backup` holds the previous version of the state beside it. A backup of another lineage
// found there is the only copy of another state: a deleted workspace's last state, the state an
// old file held before --state or a `state push` started a new lineage at its path, or a file that
// cannot be read as a state at all. Nothing replaces it: before a backup is made (each write of
// the state store, `workspace delete`), such a file is moved (never over another file) to
// {state}.deleted-{lineage}-{serial}[-N].backup, mode 0600.
import { constants } from "node:fs";
import { chmod, copyFile, link, open, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { errnoCode, fsError, fsyncDir } from "../../fs/errors.js";
import { openRegular, type FileRole } from "../../fs/regular-files.js";

const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "EMLINK", "ENOSYS", "EINVAL"]);

/** A second name for `from` (a copy, fsynced, where hard links are unsupported); EEXIST when `to` exists. */
export async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
    return;
  } catch (e) {
    if (!NO_HARD_LINKS.has(errnoCode(e) ?? "")) throw e;
  }
  await copyFile(from, to, constants.COPYFILE_EXCL);
  const fh = await open(to, "r+");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A state text's lineage and serial as written (undefined for what is not there or not JSON). */
function versionIn(text: string): { lineage?: unknown; serial?: unknown } {
  try {
    return (JSON.parse(text) as { lineage?: unknown; serial?: unknown } | null) ?? {};
  } catch {
    return {}; // an unreadable backup is kept all the same
  }
}

/** The lineage of a state's text; undefined when it has none (not a state, not JSON). */
export function lineageIn(text: string): string | undefined {
  const lineage = versionIn(text).lineage;
  return typeof lineage === "string" ? lineage : undefined;
}

/** A state's lineage and serial, from its text, file-name safe ("unknown" for what is not there or not safe). */
function lineageAndSerial(text: string): string {
  const v = versionIn(text);
  const lineage = typeof v.lineage === "string" && /^[A-Za-z0-9-]{1,64}$/.test(v.lineage) ? v.lineage : "unknown";
  const serial =
    typeof v.serial === "number" && Number.isSafeInteger(v.serial) && v.serial >= 0 ? String(v.serial) : "unknown";
  return `${lineage}-${serial}`;
}

/** The text of `path` (a regular file, else refused as `role`); undefined when there is none. */
export async function readKept(path: string, role: FileRole): Promise<string | undefined> {
  const fh = await openRegular(path, role);
  if (!fh) return undefined;
  try {
    return await fh.readFile("utf8");
  } catch (e) {
    throw fsError(e, `read the ${role.what}`, path);
  } finally {
    await fh.close();
  }
}

/** Moves {file}.backup, whose text is `text`, to {file}.deleted-{lineage}-{serial}[-N].backup; returns that name. */
export async function moveBackupAside(file: string, text: string): Promise<string> {
  const backup = `${file}.backup`;
  const base = `${file}.deleted-${lineageAndSerial(text)}`;
  for (let n = 1; ; n++) {
    const to = `${base}${n === 1 ? "" : `-${n}`}.backup`;
    try {
      await linkOrCopy(backup, to);
    } catch (e) {
      if (errnoCode(e) === "EEXIST") continue;
      throw fsError(e, "keep the state backup of another lineage as", to);
    }
    await chmod(to, 0o600);
    await fsyncDir(dirname(to));
    await rm(backup);
    return to;
  }
}

/** A file as last seen (its identity and the lineage it held), so that it need not be read again. */
export interface SeenBackup {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  lineage: string;
}

/**
 * Before {file}.backup is replaced by a version of `lineage`: moves it aside (see the header) when
 * it holds another lineage or none. `seen`: the backup as the caller last left it, not read again
 * while it is unchanged. Returns where it was moved, if it was.
 */
export async function keepOtherLineage(
  file: string,
  lineage: string,
  role: FileRole,
  seen?: SeenBackup,
): Promise<string | undefined> {
  const backup = `${file}.backup`;
  const fh = await openRegular(backup, role);
  if (!fh) return undefined;
  let text: string;
  try {
    const st = await fh.stat({ bigint: true });
    if (
      seen &&
      seen.lineage === lineage &&
      st.ino === seen.ino &&
      st.size === seen.size &&
      st.mtimeNs === seen.mtimeNs &&
      st.ctimeNs === seen.ctimeNs
    )
      return undefined;
    text = await fh.readFile("utf8");
  } catch (e) {
    throw fsError(e, `read the ${role.what}`, backup);
  } finally {
    await fh.close();
  }
  return lineageIn(text) === lineage ? undefined : moveBackupAside(file, text);
}
