/** The identity provider's metadata (/saml/metadata): what a service provider registers Gatehouse by. */
import type { Services } from '../services';
import { samlKeys } from './keys';
import { idpEntityId, sloUrl, ssoUrl, xmlText } from './messages';
import { BINDING, NAMEID_FORMATS } from './providers';
import { NS } from './xml';

/** The IdP's metadata: entity id, SSO (Redirect, POST), SLO, and every signing certificate (current, then next). */
export async function idpMetadata(s: Services): Promise<string> {
  const keys = await samlKeys(s);
  const keyDescriptors = keys
    .map(
      (k) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${k.certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('\n    ');
  const formats = Object.values(NAMEID_FORMATS)
    .map((f) => `<md:NameIDFormat>${f}</md:NameIDFormat>`)
    .join('\n    ');
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="${NS.metadata}" xmlns:ds="${NS.dsig}" entityID="${xmlText(idpEntityId(s))}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="${NS.protocol}">
    ${keyDescriptors}
    <md:SingleLogoutService Binding="${BINDING.redirect}" Location="${xmlText(sloUrl(s))}"/>
    <md:SingleLogoutService Binding="${BINDING.post}" Location="${xmlText(sloUrl(s))}"/>
    ${formats}
    <md:SingleSignOnService Binding="${BINDING.redirect}" Location="${xmlText(ssoUrl(s))}"/>
    <md:SingleSignOnService Binding="${BINDING.post}" Location="${xmlText(ssoUrl(s))}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>
`;
}
