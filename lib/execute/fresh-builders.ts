// Builders QueryLib made itself from a Repository: no host conditions, joins or parameters, so
// what is compiled for them depends only on the entity and the request, and can be cached.
const freshBuilders = new WeakSet<object>();

export const markFreshBuilder = (qb: object): void => void freshBuilders.add(qb);
export const isFreshBuilder = (qb: object): boolean => freshBuilders.has(qb);
