// Shared vaults need one digest key across every process that uses them.
export function checkDigestKey(vault: string, key: string | undefined): string {
  if (typeof key !== "string" || key.length < 16) throw new Error(`${vault}: digestKey must be a secret of at least 16 characters, the same in every process sharing the vault`);
  return key;
}
