/**
 * What the front ends may name from the core besides its operations: the views and inputs those
 * operations take and give, and a few pure helpers. core.ts re-exports all of it; front ends import
 * from core.ts only.
 */
export { assertStoreExists, engineVersions, prepareDataDir } from './store/connection';
export { BUILD, VERSION } from './build-info';
export { PAGE_SIZE } from './records/operations';
export { normalPath, safeReturn } from './apps/rules';
export { browserAsset } from './native/lazy';
export { describe as describePermission } from './permission/bits';
export { isApiKey } from './auth/api-keys';
export { assertPlainJson } from './plain-json';
export { ACR_VALUES } from './accounts/assurance';
export type { Actor, Caller } from './actor';
export type { AccountInput } from './accounts/operations';
export type { MetricsSnapshot } from './operator';
export type { AccountView } from './accounts/views';
export type { AppPasswordView } from './accounts/app-passwords';
export type { SshKeyView } from './accounts/ssh-keys';
export type { ApiKeyView, NewApiKey } from './accounts/api-keys';
export type { ActionResult } from './actions/types';
export type { ActionPermissionView, PermissionChange } from './records/action-permissions';
export type { RecordPage, RecordView } from './records/service';
export type { LookNow, LookSettings, LookSource } from './look';
export type { Query } from './records/query';
export type { AuditRow, AuditFilter } from './store/audit';
export type { BootstrapOutcome } from './accounts/bootstrap';
export type { GroupView, GroupDetail } from './groups/manage';
export type { SharedGroup } from './records/sharing';
export type { MemberChange } from './groups/members';
export type { KeyView } from './keys/operations';
export type { PublicJwk } from './auth/keys';
export type { SessionView } from './accounts/sessions';
export type { ClientView, NewClient } from './oidc/clients';
export type { SamlSpView, NewSamlSp, NameIdKind } from './saml/providers';
export type { SamlCertView } from './saml/keys';
export type { ScimTokenView } from './scim/tokens';
export type { ScimQuery } from './scim/operations';
export type { NewScimTarget, ScimTargetView } from './scim/targets';
export type { BoundMessage, BrowserStep } from './saml/messages';
export type { ContinueResult } from './saml/sso';
export { AUDIENCE_METADATA, ID_TOKEN_CLAIMS, ID_TOKEN_CLAIMS_METADATA } from './oidc/clients';
export type { OidcClaims, ProviderAdapter } from './oidc/support';
export type { SchemaStatus } from './store/connection';
export type { AppView, ForwardDecision, NewAppInput } from './apps/operations';
export type { PasskeyView } from './passkeys/operations';
export type { InvitationView, NewInvitation } from './invitations/operations';
export type { IdentityView, NewProvider, ProviderView } from './upstream/operations';
export type { DeliveryView, NewWebhook, WebhookView } from './deliveries/operations';
export type { DirectoryGroup, DirectoryIdentity, PeopleQuery, Person, SearchOutcome } from './directory/operations';
export { EVENT_TYPES } from './deliveries/events';
