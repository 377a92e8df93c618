/** Every kind a configuration file holds, in the order an apply makes them match (groups first: gates name them). */
import type { ConfigKind } from '../kind';
import { actionsKind } from './actions';
import { groupsKind } from './groups';
import { oidcClientsKind } from './oidc-clients';
import { forwardAppsKind } from './forward-apps';

export const KINDS: readonly ConfigKind[] = [groupsKind, actionsKind, oidcClientsKind, forwardAppsKind];
