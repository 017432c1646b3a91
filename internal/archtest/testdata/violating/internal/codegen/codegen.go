package codegen

// Spec is generated code.
type Spec string
