export * from './core/model.js';
export * from './core/errors.js';
