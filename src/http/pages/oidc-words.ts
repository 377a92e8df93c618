/** Why a client's group gate refused, as the application (and the device's page) is told. */
export const NOT_ALLOWED = 'this account may not sign in to this application';
