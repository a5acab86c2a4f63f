// The compositor's one surface shader (see material.rs): colour · (ambient + diffuse) plus
// emission, times the object's texture. It has no branch or loop on a uniform on purpose:
// Mesa 22's lavapipe inlines uniforms that steer control flow and recompiles such a shader at
// every draw (and never frees the result), which made kiss3d's PBR shader cost ~50 ms and
// ~6 MB per object per frame.

struct FrameUniforms {
    view: mat4x4<f32>,
    proj: mat4x4<f32>,
    // xyz: direction the light travels (world, unit); w: ambient fraction.
    light: vec4<f32>,
}

@group(0) @binding(0)
var<uniform> frame: FrameUniforms;

struct ObjectUniforms {
    transform: mat4x4<f32>,
    // xyz: the node's scale; w unused.
    scale: vec4<f32>,
    // Linear albedo (lit part).
    color: vec4<f32>,
    // Linear emission (unlit part).
    emissive: vec4<f32>,
}

@group(1) @binding(0)
var<uniform> object: ObjectUniforms;

@group(2) @binding(0)
var tex: texture_2d<f32>;
@group(2) @binding(1)
var tex_sampler: sampler;

struct VertexInput {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
}

struct VertexOutput {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) normal_in_world: vec3<f32>,
    @location(1) uv: vec2<f32>,
}

@vertex
fn vs_main(v: VertexInput) -> VertexOutput {
    var out: VertexOutput;
    let p = vec4<f32>(object.scale.xyz * v.position, 1.0);
    out.clip_position = frame.proj * frame.view * object.transform * p;
    // Normals transform with the inverse scale (exact for the axis-aligned scales of nodes).
    let n = v.normal / object.scale.xyz;
    out.normal_in_world = (object.transform * vec4<f32>(n, 0.0)).xyz;
    out.uv = v.uv;
    return out;
}

@fragment
fn fs_main(in: VertexOutput) -> @location(0) vec4<f32> {
    let n = normalize(in.normal_in_world);
    let ambient = frame.light.w;
    // Two-sided diffuse: thin shapes seen from behind are not black.
    let diffuse = abs(dot(n, -frame.light.xyz));
    let shade = ambient + (1.0 - ambient) * diffuse;
    let texel = textureSample(tex, tex_sampler, in.uv).rgb;
    let rgb = (object.color.rgb * shade + object.emissive.rgb) * texel;
    return vec4<f32>(rgb, 1.0);
}
