/** Every kind a configuration file holds, in the order an apply makes them match (groups first: gates name them). */
import type { ConfigKind } from '../kind';
import { actionsKind } from './actions';
import { groupsKind } from './groups';
import { oidcClientsKind } from './oidc-clients';
import { forwardAppsKind } from './forward-apps';
import { samlSpsKind } from './saml-sps';
import { providersKind } from './providers';
import { webhooksKind } from './webhooks';
import { scimTargetsKind } from './scim-targets';
import { lookKind } from './look';

export const KINDS: readonly ConfigKind[] = [
  groupsKind,
  actionsKind,
  oidcClientsKind,
  samlSpsKind,
  forwardAppsKind,
  providersKind,
  webhooksKind,
  scimTargetsKind,
  lookKind,
];
