/**
 * samlify (XML signatures on xml-crypto) and @xmldom/xmldom, loaded at first use and typed here
 * for the parts Gatehouse uses: their own type files bring in the browser's DOM library
 * (`/// <reference lib="dom" />`), which would change the types of Node's globals (fetch and its
 * bodies) for the whole program.
 */
/* eslint-disable @typescript-eslint/no-require-imports */

export interface XmlDom {
  DOMParser: new (options?: { locator?: object; errorHandler?: { warning?(m: string): void; error?(m: string): void; fatalError?(m: string): void } }) => {
    parseFromString(xml: string, mimeType: string): { documentElement: unknown; childNodes: unknown } | undefined;
  };
}

/** A certificate source as samlify's signature checks read it. */
export interface CertificateHolder {
  getX509Certificate(use: 'signing'): string[];
}

export interface SamlLib {
  constructSAMLSignature(opts: {
    rawSamlMessage: string;
    referenceTagXPath?: string;
    isMessageSigned?: boolean;
    privateKey: string;
    signingCert: string;
    signatureAlgorithm?: string;
    isBase64Output?: boolean;
    signatureConfig?: { prefix?: string; location?: { reference: string; action: 'after' | 'before' | 'append' | 'prepend' } };
  }): string;
  verifySignature(xml: string, opts: { metadata: CertificateHolder; signatureAlgorithm?: string }): [boolean, unknown];
}

interface Samlify {
  SamlLib: SamlLib;
  setSchemaValidator(v: { validate(xml: string): Promise<string> }): void;
}

export const xmldom = (): XmlDom => require('@xmldom/xmldom') as XmlDom;

let configured = false;
export function samlLib(validate: (xml: string) => Promise<string>): SamlLib {
  const samlify = require('samlify') as Samlify;
  if (!configured) {
    samlify.setSchemaValidator({ validate });
    configured = true;
  }
  return samlify.SamlLib;
}
