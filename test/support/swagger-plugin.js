// ts-jest AST transformer: the @nestjs/swagger CLI plugin, as nest-cli.json runs it for `nest build`.
const { before } = require('@nestjs/swagger/plugin');

module.exports = {
  name: 'nestjs-swagger-plugin',
  version: 1,
  factory: (compiler, options) => before(options, compiler.program),
};
