// The compositor's one shader (see material.rs): surfaces are colour · (ambient + diffuse)
// plus emission, times the object's texture; shadow footprints and the darkening pass that
// applies them have entry points of their own (see shadow.rs). It has no branch or loop on a uniform on purpose:
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
    // Shadow footprints only: the edge lines (nx, ny, c, 0) of a convex polygon on the
    // desk, a point p being dot(n, p) − c outside each (unused lines: n = 0, c huge), and
    // (darkening, penumbra width m, unused, unused).
    footprint: array<vec4<f32>, 16>,
    footprint_params: vec4<f32>,
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

struct ShadowOutput {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) desk_xy: vec2<f32>,
}

@vertex
fn vs_shadow(v: VertexInput) -> ShadowOutput {
    var out: ShadowOutput;
    let p_in_world = object.transform * vec4<f32>(object.scale.xyz * v.position, 1.0);
    out.clip_position = frame.proj * frame.view * p_in_world;
    out.desk_xy = p_in_world.xy;
    return out;
}

// Signed distance from p to the footprint polygon (negative inside; mitred round corners).
// A fixed loop with no branch on uniform values (see the top of the file).
fn footprint_distance(p: vec2<f32>) -> f32 {
    var d = -1e30;
    for (var i = 0u; i < 16u; i = i + 1u) {
        let line = object.footprint[i];
        d = max(d, dot(line.xy, p) - line.z);
    }
    return d;
}

@fragment
fn fs_shadow(in: ShadowOutput) -> @location(0) vec4<f32> {
    let darkening = object.footprint_params.x;
    let half_penumbra = max(0.5 * object.footprint_params.y, 1e-5);
    let d = footprint_distance(in.desk_xy);
    let covered = 1.0 - smoothstep(-half_penumbra, half_penumbra, d);
    return vec4<f32>(1.0, 1.0, 1.0, 1.0 - darkening * covered);
}

@fragment
fn fs_darken() -> @location(0) vec4<f32> {
    return vec4<f32>(0.0, 0.0, 0.0, 1.0);
}
