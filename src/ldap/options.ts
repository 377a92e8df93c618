/** How the LDAP listener is set up (serve.ts reads it from the configuration), and what it returns. */
export interface LdapOptions {
  host: string;
  /** Plain LDAP (with StartTLS when a certificate is given), or null. */
  port: number | null;
  /** LDAP over TLS, or null. */
  tlsPort: number | null;
  /** PEM certificate chain and key for LDAPS and StartTLS, or null. */
  tls: { cert: string; key: string } | null;
  baseDn: string;
  /** Managed groups whose members may search (administrators always may). */
  readers: readonly string[];
  /** Allow a simple bind in clear text from an address other than loopback. */
  allowInsecureBind: boolean;
}

export interface LdapServer {
  /** The plain port and the TLS port actually bound (port 0 picks one), or null. */
  port: number | null;
  tlsPort: number | null;
  close(): Promise<void>;
}
