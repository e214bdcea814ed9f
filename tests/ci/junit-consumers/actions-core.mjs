// Stands in for @actions/core, which the parsers import only to log: its
// own dependencies need a newer Node than Debian's. Registered with
// `node --import`.
import {register} from 'node:module'

const logger = `
export const debug = () => {}
export const isDebug = () => false
export const info = message => console.error('info: ' + message)
export const notice = message => console.error('notice: ' + message)
export const warning = message => console.error('warning: ' + message)
export const error = message => console.error('error: ' + message)
`
const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier === '@actions/core') {
    return {url: 'data:text/javascript,' + encodeURIComponent(${JSON.stringify(logger)}), shortCircuit: true}
  }
  return next(specifier, context)
}
`
register('data:text/javascript,' + encodeURIComponent(hooks))
