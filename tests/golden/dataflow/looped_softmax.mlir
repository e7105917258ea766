// Loom TileProgram of kernel t ()
"builtin.module"() ({
  "func.func"() <{function_type = (memref<64x256xbf16>, memref<64x256xbf16>) -> (), sym_name = "t"}> ({
  ^bb0(%x: memref<64x256xbf16>, %out: memref<64x256xbf16>):
    %tile_m = "loom.sym"() {symbol_ref = @tile_m, kind = "tile", lower_bound = 32 : index, upper_bound = 64 : index, alignment = 32 : index} : () -> index
    %tile_x_d1 = "loom.sym"() {symbol_ref = @tile_x_d1, kind = "tile", lower_bound = 32 : index, upper_bound = 256 : index, alignment = 32 : index} : () -> index
    "loom.grid"() ({
    ^bb0(%tile_m_id: index):
      %mx_init = "loom.full"() {value = "-inf", shape = ["tile_m"]} : () -> tensor<?xf32>
      %sm_init = "loom.full"() {value = 0.0 : f64, shape = ["tile_m"]} : () -> tensor<?xf32>
      %mx, %sm = "loom.for"(%mx_init, %sm_init) ({
      ^bb0(%tile_x_d1_id: index, %mx_acc: tensor<?xf32>, %sm_acc: tensor<?xf32>):
        %x_tile_chunk = "loom.load"(%x) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (memref<64x256xbf16>) -> tensor<?x?xbf16>
        %row_chunk = "loom.convert"(%x_tile_chunk) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
        %mx_part = "loom.reduce"(%row_chunk) {fn = "max", axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
        %mx_next = "loom.elementwise"(%mx_acc, %mx_part) {fn = "maximum"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        %mx_next_col = "loom.expand_dims"(%mx_next) {axis = 1 : i64} : (tensor<?xf32>) -> tensor<?x1xf32>
        %shifted_online = "loom.elementwise"(%row_chunk, %mx_next_col) {fn = "sub"} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
        %num_online = "loom.elementwise"(%shifted_online) {fn = "exp"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
        %sm_part = "loom.reduce"(%num_online) {fn = "sum", axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
        %sm_shift = "loom.elementwise"(%mx_acc, %mx_next) {fn = "sub"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        %sm_scale = "loom.elementwise"(%sm_shift) {fn = "exp"} : (tensor<?xf32>) -> tensor<?xf32>
        %sm_kept = "loom.elementwise"(%sm_acc, %sm_scale) {fn = "mul"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        %sm_next = "loom.elementwise"(%sm_kept, %sm_part) {fn = "add"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        "loom.yield"(%mx_next, %sm_next) : (tensor<?xf32>, tensor<?xf32>) -> ()
      }) {tile = @tile_x_d1, begin = "0", end = "256", trip_count = "ceildiv(256, tile_x_d1)"} : (tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
      %mxk = "loom.expand_dims"(%mx) {axis = 1 : i64} : (tensor<?xf32>) -> tensor<?x1xf32>
      %smk = "loom.expand_dims"(%sm) {axis = 1 : i64} : (tensor<?xf32>) -> tensor<?x1xf32>
      "loom.for"() ({
      ^bb0(%tile_x_d1_id: index):
        %x_tile_chunk_2 = "loom.load"(%x) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (memref<64x256xbf16>) -> tensor<?x?xbf16>
        %row_chunk_2 = "loom.convert"(%x_tile_chunk_2) : (tensor<?x?xbf16>) -> tensor<?x?xf32>
        %shifted_chunk = "loom.elementwise"(%row_chunk_2, %mxk) {fn = "sub"} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
        %num_chunk = "loom.elementwise"(%shifted_chunk) {fn = "exp"} : (tensor<?x?xf32>) -> tensor<?x?xf32>
        %q_chunk = "loom.elementwise"(%num_chunk, %smk) {fn = "div"} : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
        %q_bf16_chunk = "loom.convert"(%q_chunk) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
        "loom.store"(%q_bf16_chunk, %out) {offsets = ["tile_m*tile_m_id", "tile_x_d1*tile_x_d1_id"], sizes = ["tile_m", "tile_x_d1"]} : (tensor<?x?xbf16>, memref<64x256xbf16>) -> ()
        "loom.yield"() : () -> ()
      }) {tile = @tile_x_d1, begin = "0", end = "256", trip_count = "ceildiv(256, tile_x_d1)"} : () -> ()
      "loom.yield"() : () -> ()
    }) {tiles = [@tile_m], extents = [64 : index], num_tiles = ["ceildiv(64, tile_m)"]} : () -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
