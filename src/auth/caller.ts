import type { Permission } from './permissions';

/** Who is calling: the project key that authenticated the request. */
export interface Caller {
  projectId: string;
  keyId: string;
  keyName: string;
  permissions: ReadonlySet<Permission>;
  /** How history names changes made with this key: "<key name> (API)". */
  actor: string;
}
